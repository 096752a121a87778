/** `deno task bench:streams` measures what it says, at more streams than one client may open by default. */

import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

Deno.test("bench/streams.ts: with 60 streams from one address, every post reaches every stream", async () => {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-all",
      "bench/streams.ts",
      "--streams=60",
      "--posts=3",
      "--stores=memory",
    ],
    cwd: ROOT,
    signal: AbortSignal.timeout(60_000),
  }).output();
  const out = new TextDecoder().decode(stdout);
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const row = out.split("\n").find((line) => line.startsWith("| memory |"));
  assert.ok(row, out);
  // The last column: posts seen by all 60 streams.
  assert.equal(row.split("|").at(-2)!.trim(), "3/3", row);
});
