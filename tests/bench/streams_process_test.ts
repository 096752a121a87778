/** `deno task bench:streams` measures what it says, over both transports and against its floor, at more streams than one client may open by default. */

import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

const bench = (...flags: string[]) =>
  new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", "bench/streams.ts", ...flags],
    cwd: ROOT,
    signal: AbortSignal.timeout(90_000),
  }).output();

/** The cells of each row of the table the bench prints, below its header. */
function tableRows(out: string): string[][] {
  // Past the header; the line under it starts "|---".
  return out.split("\n").filter((line) => line.startsWith("| ")).slice(1)
    .map((line) => line.split("|").slice(1, -1).map((cell) => cell.trim()));
}

Deno.test("bench/streams.ts: with 60 readers from one address, every post reaches every reader, on each transport and on the floor", async () => {
  const { code, stdout, stderr } = await bench(
    "--streams=60",
    "--posts=3",
    "--stores=memory",
    "--transports=sse,websocket",
  );
  const out = new TextDecoder().decode(stdout);
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const rows = tableRows(out);
  // Store, transport, readers, and the last column: posts seen by all.
  assert.deepEqual(
    rows.map((cells) => [cells[0], cells[1], cells[2], cells.at(-1)]),
    [
      ["floor: plain Deno.serve", "sse", "60", "3/3"],
      ["memory", "sse", "60", "3/3"],
      ["floor: plain Deno.serve", "websocket", "60", "3/3"],
      ["memory", "websocket", "60", "3/3"],
    ],
    out,
  );
});

Deno.test("bench/streams.ts: the WebSocket readers answer the program's pings, so with a heartbeat far shorter than the row every post still reaches every reader", async () => {
  const { code, stdout, stderr } = await bench(
    "--streams=20",
    "--posts=3",
    "--stores=memory",
    "--transports=websocket",
    // A ping every 50 ms; a socket whose pong does not come within 50 ms
    // more is closed, long before the posts (2 s after opening).
    "--heartbeat-ms=50",
  );
  const out = new TextDecoder().decode(stdout);
  assert.equal(code, 0, new TextDecoder().decode(stderr));
  const program = tableRows(out).find((cells) => cells[0] === "memory");
  assert.ok(program, out);
  // Pings answered, then posts seen by all.
  assert.ok(Number(program.at(-2)) >= 20, out);
  assert.equal(program.at(-1), "3/3", out);
});

Deno.test("bench/streams.ts: an unknown transport is a usage error", async () => {
  const { code, stderr } = await bench("--transports=sse,carrier-pigeon");
  assert.equal(code, 2);
  assert.match(new TextDecoder().decode(stderr), /--transports/);
});
