import assert from "node:assert/strict";
import { fixture, runTool } from "../_support/tool_fixture.ts";

Deno.test("a cycle among the package's modules fails the check and is named", async () => {
  const dir = await fixture({
    "mod.ts": 'export * from "./src/a.ts";\n',
    "src/a.ts": 'import { b } from "./b.ts";\nexport const a = () => b;\n',
    "src/b.ts":
      'export const b = 1;\nexport const load = () => import("./a.ts");\n',
  });
  try {
    const { code, out } = await runTool(dir, "check_import_cycles.ts");
    assert.equal(code, 1, out);
    assert.match(out, /import cycle: src\/a\.ts -> src\/b\.ts -> src\/a\.ts/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("imports that point one way pass", async () => {
  const dir = await fixture({
    "mod.ts": 'export * from "./src/a.ts";\n',
    "src/a.ts": 'import { b } from "./b.ts";\nexport const a = () => b;\n',
    "src/b.ts": "export const b = 1;\n",
  });
  try {
    const { code, out } = await runTool(dir, "check_import_cycles.ts");
    assert.equal(code, 0, out);
    assert.match(out, /no import cycles among \d+ modules/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a folder that imports a folder above it fails the check, naming the import", async () => {
  const dir = await fixture({
    "mod.ts": 'export * from "./src/http/a.ts";\n',
    "src/http/a.ts":
      'import { b } from "../store/b.ts";\nexport const a = () => b;\n',
    "src/store/b.ts": "export const b = 1;\n",
  });
  try {
    const { code, out } = await runTool(dir, "check_import_cycles.ts");
    assert.equal(code, 1, out);
    assert.match(
      out,
      /folder src\/http imports src\/store above it: src\/http\/a\.ts -> src\/store\/b\.ts/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a folder missing from the layer order fails the check", async () => {
  const dir = await fixture({
    "mod.ts": 'export * from "./src/misc/a.ts";\n',
    "src/misc/a.ts": "export const a = 1;\n",
  });
  try {
    const { code, out } = await runTool(dir, "check_import_cycles.ts");
    assert.equal(code, 1, out);
    assert.match(out, /folder src\/misc has no place in LAYERS/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
