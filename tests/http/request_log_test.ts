import assert from "node:assert/strict";
import { bufferedSink, withRequestLog } from "../../src/http/request_log.ts";

function collecting(options: { maxBytes?: number; delayMs?: number } = {}) {
  const writes: string[] = [];
  const sink = bufferedSink({
    ...options,
    out: (bytes) => writes.push(new TextDecoder().decode(bytes)),
  });
  return { sink, writes };
}

Deno.test("lines are written together, in order, once the delay has passed", async () => {
  const { sink, writes } = collecting({ delayMs: 20 });
  for (let i = 0; i < 100; i++) sink.write(`line ${i}`);
  assert.equal(writes.length, 0, "nothing is written on the request path");
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(writes.length, 1, "one write for the batch");
  assert.deepEqual(
    writes[0].split("\n"),
    [...Array.from({ length: 100 }, (_, i) => `line ${i}`), ""],
  );
});

Deno.test("a full batch is written at once, and flush writes the rest", () => {
  const { sink, writes } = collecting({ maxBytes: 20, delayMs: 60_000 });
  sink.write("0123456789");
  sink.write("0123456789");
  assert.deepEqual(writes, ["0123456789\n0123456789\n"]);
  sink.write("tail");
  sink.flush();
  assert.deepEqual(writes, ["0123456789\n0123456789\n", "tail\n"]);
  sink.flush();
  assert.equal(writes.length, 2, "an empty flush writes nothing");
});

Deno.test("withRequestLog logs method, path without query, status and time, never the token", async () => {
  const { sink, writes } = collecting();
  const handler = withRequestLog(
    () => new Response(null, { status: 201 }),
    sink,
  );
  await handler(
    new Request("http://h/users?secret=1", {
      headers: { "x-messaging-token": `a-${"f".repeat(40)}` },
    }),
  );
  sink.flush();
  assert.match(
    writes[0],
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z GET \/users 201 \d+\.\d\dms\n$/,
  );
});
