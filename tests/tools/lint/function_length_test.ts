import assert from "node:assert/strict";
import plugin, {
  MAX_FUNCTION_LINES,
} from "../../../tools/lint/function_length.ts";

const body = (lines: number) =>
  Array.from({ length: lines - 2 }, (_, i) => `  const v${i} = ${i};`)
    .join("\n");
const fn = (lines: number) => `function f() {\n${body(lines)}\n}\n`;
const lint = (file: string, source: string) =>
  Deno.lint.runPlugin(
    plugin,
    new URL(`../../../${file}`, import.meta.url).pathname,
    source,
  );

Deno.test("a program function one line over the limit is reported with its length", () => {
  const [report, ...more] = lint("src/x.ts", fn(MAX_FUNCTION_LINES + 1));
  assert.equal(more.length, 0);
  assert.match(report!.message, new RegExp(`${MAX_FUNCTION_LINES + 1} lines`));
});

Deno.test("functions at the limit, arrows and expressions alike, pass", () => {
  assert.deepEqual(lint("src/x.ts", fn(MAX_FUNCTION_LINES)), []);
  const arrow = `const f = () => {\n${body(MAX_FUNCTION_LINES + 1)}\n};\n`;
  assert.equal(lint("chat.ts", arrow).length, 1);
});

Deno.test("tests, benches and tools are not held to the limit", () => {
  assert.deepEqual(lint("tests/x_test.ts", fn(MAX_FUNCTION_LINES + 40)), []);
});
