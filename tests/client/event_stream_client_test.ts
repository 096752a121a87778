/**
 * Following a stream with a fetch the test plays the server with: what is
 * yielded, how it reconnects, and when it gives up.
 */
import assert from "node:assert/strict";
import { followEventStream } from "../../src/client/event_stream_client.ts";
import { ServiceError } from "../../src/client/service_error.ts";

const URL_ = new URL("http://service.test/events");

/** A server answering each connection in turn; what each connection asked is kept. */
function server(answers: (() => Response)[]) {
  const asked: (string | null)[] = [];
  const fetchFn: typeof fetch = (_input, init) => {
    asked.push(new Headers(init?.headers).get("last-event-id"));
    const next = answers.shift();
    if (next === undefined) return Promise.reject(new TypeError("no server"));
    return Promise.resolve(next());
  };
  return { fetchFn, asked };
}

/** A stream that sends `text` in pieces and ends. */
const stream = (...pieces: string[]) => () =>
  new Response(
    new ReadableStream({
      start(controller) {
        for (const piece of pieces) {
          controller.enqueue(new TextEncoder().encode(piece));
        }
        controller.close();
      },
    }),
    { headers: { "content-type": "text/event-stream" } },
  );

/** The first `count` events `followEventStream` yields, then it is left. */
async function take(
  events: AsyncGenerator<{ id?: string; data: string }>,
  count: number,
): Promise<string[]> {
  const seen: string[] = [];
  for await (const event of events) {
    seen.push(`${event.id ?? "-"}:${event.data}`);
    if (seen.length === count) break;
  }
  return seen;
}

Deno.test("events come as sent, however the bytes are split", async () => {
  const { fetchFn } = server([
    stream(
      "retry: 5\n\nid: 1\nevent: mess",
      'age\ndata: {"a"',
      ":1}\n\n",
      "id: 2\ndata: x\n\n",
    ),
  ]);
  const events = followEventStream(fetchFn, URL_);
  assert.deepEqual(await take(events, 2), ['1:{"a":1}', "2:x"]);
});

Deno.test("a stream that ends is followed again after the server's retry, from the last id seen", async () => {
  const reasons: unknown[] = [];
  const { fetchFn, asked } = server([
    stream("retry: 5\n\nid: 7\ndata: a\n\n"),
    stream("data: no id\n\nid: 8\ndata: b\n\n"),
    () => new Response("busy", { status: 503 }),
    stream("id: 9\ndata: c\n\n"),
  ]);
  const events = followEventStream(fetchFn, URL_, {
    lastEventId: 5,
    onReconnect: (reason) => reasons.push(reason),
  });
  assert.deepEqual(await take(events, 4), ["7:a", "-:no id", "8:b", "9:c"]);
  assert.deepEqual(asked, ["5", "7", "8", "8"]);
  assert.equal(reasons.length, 3);
  assert.match(String(reasons[0]), /the stream ended/);
  assert.ok(reasons[2] instanceof ServiceError && reasons[2].status === 503);
});

Deno.test("a refusal waiting cannot fix (4xx) ends the iteration with a ServiceError", async () => {
  const { fetchFn, asked } = server([
    () =>
      Response.json({
        status: "error",
        errors: [{ location: "url", name: "streams", description: "Too many" }],
      }, { status: 429, headers: { "retry-after": "4" } }),
  ]);
  const error = await take(followEventStream(fetchFn, URL_), 1).catch((e) => e);
  assert.ok(error instanceof ServiceError);
  assert.equal(error.status, 429);
  assert.equal(error.message, "Too many");
  assert.equal(error.retryAfterSeconds, 4);
  assert.equal(asked.length, 1);
});

Deno.test("aborting the signal ends the iteration, even while it waits to reconnect", async () => {
  const stop = new AbortController();
  const { fetchFn, asked } = server([
    // A long retry: only the abort can end the wait.
    stream("retry: 3600000\n\nid: 1\ndata: a\n\n"),
  ]);
  const seen: string[] = [];
  const followed = (async () => {
    for await (
      const event of followEventStream(fetchFn, URL_, { signal: stop.signal })
    ) {
      seen.push(event.data);
    }
  })();
  await new Promise((r) => setTimeout(r, 50));
  stop.abort();
  await followed;
  assert.deepEqual(seen, ["a"]);
  assert.equal(asked.length, 1);
});

Deno.test("an aborted signal from the start makes no request", async () => {
  const { fetchFn, asked } = server([stream("data: a\n\n")]);
  const seen = await take(
    followEventStream(fetchFn, URL_, { signal: AbortSignal.abort() }),
    1,
  );
  assert.deepEqual(seen, []);
  assert.deepEqual(asked, []);
});
