import assert from "node:assert/strict";
import { callOf, SCRIPTS } from "../../../src/store/redis/scripts.ts";

const LUA = new URL("../../../src/store/redis/lua/", import.meta.url);

Deno.test("no .lua file addresses KEYS or ARGV by position: names come from the declarations", async () => {
  let files = 0;
  for await (const entry of Deno.readDir(LUA)) {
    if (!entry.name.endsWith(".lua")) continue;
    files++;
    const text = await Deno.readTextFile(new URL(entry.name, LUA));
    assert.doesNotMatch(text, /KEYS\[/, entry.name);
    // A script's extra arguments are read in a loop from `<rest>From` on.
    assert.doesNotMatch(text, /ARGV\[\s*\d/, entry.name);
  }
  assert.ok(files >= 18, `${files} .lua files`);
});

Deno.test("every script binds each declared key and argument to one Lua local, in order", () => {
  for (const [name, script] of Object.entries(SCRIPTS)) {
    const lines = script.source.split("\n");
    script.keys.forEach((key, i) =>
      assert.equal(lines[i], `local ${key} = KEYS[${i + 1}]`, name)
    );
    script.args.forEach((arg, i) =>
      assert.equal(
        lines[script.keys.length + i],
        `local ${arg} = ARGV[${i + 1}]`,
        name,
      )
    );
    assert.equal(
      new Set([...script.keys, ...script.args]).size,
      script.keys.length + script.args.length,
      `${name}: a name used twice`,
    );
  }
});

Deno.test("a call names keys and arguments in any order and sends them in the declared one", () => {
  assert.deepEqual(
    callOf("recent", { sequence: "lms:seq", messages: "lms:history" }, {
      limit: "5",
      afterId: "0",
    }),
    ["recent", ["lms:history", "lms:seq"], ["0", "5"]],
  );
});
