import assert from "node:assert/strict";
import { fixture, runTool } from "../_support/tool_fixture.ts";

const documented = `/**
 * One.
 *
 * @example Using it
 * \`\`\`ts
 * import { one } from "./mod.ts";
 * one();
 * \`\`\`
 */
export function one(): number {
  return 1;
}
`;

Deno.test("a public export without an @example fails the check and is named", async () => {
  const dir = await fixture({
    "mod.ts":
      `${documented}\n/** Two, with no example. */\nexport const two = 2;\n`,
  });
  try {
    const { code, out } = await runTool(dir, "check_doc_examples.ts");
    assert.equal(code, 1, out);
    assert.match(
      out,
      /public exports without an @example:\n\s+\S*mod\.ts: two\n/,
    );
    assert.doesNotMatch(out, /: one/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("every export with an example passes", async () => {
  const dir = await fixture({ "mod.ts": documented });
  try {
    const { code, out } = await runTool(dir, "check_doc_examples.ts");
    assert.equal(code, 0, out);
    assert.match(out, /every one of 1 public exports has an @example/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
