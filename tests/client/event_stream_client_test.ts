/**
 * Following a stream with a fetch the test plays the server with: what is
 * yielded, how it reconnects, and when it gives up.
 */
import assert from "node:assert/strict";
import {
  followEventStream as follow,
  type FollowOptions,
  reconnectDelay,
} from "../../src/client/event_stream_client.ts";
import { ServiceError } from "../../src/client/service_error.ts";

const URL_ = new URL("http://service.test/events");

/** A server answering each connection in turn; what each connection asked is kept. */
function server(answers: (() => Response)[]) {
  const asked: (string | null)[] = [];
  const times: number[] = [];
  const fetchFn: typeof fetch = (_input, init) => {
    asked.push(new Headers(init?.headers).get("last-event-id"));
    times.push(performance.now());
    const next = answers.shift();
    if (next === undefined) return Promise.reject(new TypeError("no server"));
    return Promise.resolve(next());
  };
  return { fetchFn, asked, times };
}

/** Follows `URL_` as server-sent events through `fetchFn`, anonymously. */
const followEventStream = (
  fetchFn: typeof fetch,
  url: URL,
  options: FollowOptions = {},
) =>
  follow({ fetch: fetchFn, url, token: () => undefined }, {
    transport: "sse",
    ...options,
  });

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

/** A stream that sends `text` and then nothing, never ending, as a stopped process would. */
const stalled = (text: string, cancel?: () => void) => () =>
  new Response(
    new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(text));
      },
      cancel,
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

Deno.test("a 503 is retried no sooner than its Retry-After says", async () => {
  const { fetchFn, times } = server([
    // Longer than the 1 s the client waits when told nothing.
    () =>
      new Response("busy", { status: 503, headers: { "retry-after": "2" } }),
    stream("retry: 5\n\nid: 1\ndata: a\n\n"),
  ]);
  assert.deepEqual(await take(followEventStream(fetchFn, URL_), 1), ["1:a"]);
  assert.ok(times[1]! - times[0]! >= 2000, `${times[1]! - times[0]!} ms`);
});

Deno.test("refusals in a row are each retried after their Retry-After, not after a doubled delay", async () => {
  const busy = () =>
    new Response("busy", { status: 503, headers: { "retry-after": "1" } });
  const { fetchFn, times } = server([
    busy,
    busy,
    busy,
    stream("id: 1\ndata: a\n\n"),
  ]);
  assert.deepEqual(await take(followEventStream(fetchFn, URL_), 1), ["1:a"]);
  const gaps = times.slice(1).map((t, i) => t - times[i]!);
  // Each 1 to 2 s, less than 7 s in all (with room for a late timer on a
  // loaded host); doubling would have waited at least 1 + 2 + 4 s.
  for (const gap of gaps) assert.ok(gap >= 1000 && gap < 3000, `${gaps}`);
  assert.ok(gaps.reduce((a, b) => a + b) < 7000, `${gaps}`);
});

Deno.test("the delay: doubling while nothing is delivered, a refusal's Retry-After instead when told, each stretched by up to as much again", () => {
  for (let failures = 0; failures <= 10; failures++) {
    const doubled = 1000 * 2 ** Math.min(Math.max(failures - 1, 0), 5);
    const told = [undefined, 0, 1, 5, 60][failures % 5];
    const base = told === undefined ? doubled : Math.max(told * 1000, 1000);
    for (let i = 0; i < 50; i++) {
      const ms = reconnectDelay(failures, 1000, told);
      assert.ok(ms >= base && ms < 2 * base, `${failures}, ${told}: ${ms}`);
    }
  }
});

Deno.test("an aborted signal ends the iteration even when the response body goes on after it (as Deno 2.9.6's fetch sometimes did)", async () => {
  let timer: ReturnType<typeof setInterval> | undefined;
  let id = 0;
  // Deaf to the signal: a message every 10 ms until cancelled.
  const endless = () =>
    new Response(
      new ReadableStream({
        start(controller) {
          timer = setInterval(() => {
            id++;
            controller.enqueue(
              new TextEncoder().encode(`id: ${id}\ndata: x\n\n`),
            );
          }, 10);
        },
        cancel: () => clearInterval(timer),
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  const { fetchFn } = server([endless]);
  const stop = new AbortController();
  let heard = 0;
  let ended = false;
  const following = (async () => {
    for await (
      const _event of followEventStream(fetchFn, URL_, { signal: stop.signal })
    ) {
      if (++heard === 3) stop.abort();
    }
    ended = true;
  })();
  let wait: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    following,
    new Promise((resolve) => wait = setTimeout(resolve, 1_000)),
  ]);
  clearTimeout(wait);
  clearInterval(timer);
  assert.ok(ended, `still following after ${heard} events`);
  assert.equal(heard, 3);
});

Deno.test("readers dropped together come back spread over the retry delay, not at once", async () => {
  const waits = await Promise.all(
    Array.from({ length: 20 }, async () => {
      const { fetchFn, times } = server([
        stream("retry: 100\n\nid: 1\ndata: a\n\n"),
        stream("id: 2\ndata: b\n\n"),
      ]);
      await take(followEventStream(fetchFn, URL_), 2);
      return times[1]! - times[0]!;
    }),
  );
  for (const ms of waits) assert.ok(ms >= 100, `${ms} ms`);
  const spread = Math.max(...waits) - Math.min(...waits);
  // Uniform over 100 ms: 20 waits within 10 ms of each other is a 1e-17 chance.
  assert.ok(spread >= 10, `waits ${waits.map(Math.round)}`);
});

Deno.test("onOpen is told of each connection accepted, before its events, and not of a refused one", async () => {
  const told: string[] = [];
  const { fetchFn } = server([
    stream("retry: 5\n\nid: 7\ndata: a\n\n"),
    () => new Response("busy", { status: 503 }),
    stream("id: 8\ndata: b\n\n"),
  ]);
  const events = followEventStream(fetchFn, URL_, {
    onOpen: () => told.push("open"),
    onReconnect: () => told.push("lost"),
  });
  for await (const event of events) {
    told.push(event.data);
    if (told.length === 6) break;
  }
  assert.deepEqual(told, ["open", "a", "lost", "lost", "open", "b"]);
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

/**
 * A server that upgrades every request and lets `script` play each socket
 * in turn (connection number, the socket, the request's URL); what each
 * socket received from the client is kept, by connection.
 */
function socketServer(
  script: (n: number, socket: WebSocket, url: URL) => void,
) {
  const received: string[][] = [];
  const urls: URL[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) => {
      if (req.headers.get("upgrade") !== "websocket") {
        return new Response("no upgrade", { status: 426 });
      }
      const { socket, response } = Deno.upgradeWebSocket(req);
      const n = urls.length;
      const url = new URL(req.url);
      urls.push(url);
      received.push([]);
      socket.onmessage = ({ data }) => received[n]?.push(String(data));
      socket.onopen = () => script(n, socket, url);
      return response;
    },
  );
  return {
    server,
    received,
    urls,
    source: (token?: string) => ({
      fetch,
      url: new URL(`http://127.0.0.1:${server.addr.port}/events`),
      token: () => token,
    }),
  };
}

const frame = (event: string, data: unknown, id?: number) =>
  JSON.stringify({ event, id, data });

Deno.test("over a WebSocket: frames come as events, the token frame goes first, and a socket closed with 1012 is followed again after the last id", async () => {
  const fake = socketServer((n, socket) => {
    if (n === 0) {
      socket.send(frame("message", { text: "a" }, 7));
      socket.send(frame("presence", { name: "ann", online: true }));
      socket.close(1012);
    } else socket.send(frame("message", { text: "b" }, 8));
  });
  try {
    const reasons: unknown[] = [];
    const seen: string[] = [];
    for await (
      const event of follow(fake.source("ann-x"), {
        lastEventId: 5,
        onReconnect: (reason) => reasons.push(reason),
      })
    ) {
      seen.push(`${event.event} ${event.id ?? "-"} ${event.data}`);
      if (seen.length === 3) break;
    }
    assert.deepEqual(seen, [
      'message 7 {"text":"a"}',
      'presence - {"name":"ann","online":true}',
      'message 8 {"text":"b"}',
    ]);
    assert.deepEqual(
      fake.urls.map((url) => url.searchParams.get("lastEventId")),
      ["5", "7"],
    );
    // The first socket was closed at once; the second heard the token.
    assert.deepEqual(fake.received[1], ['{"token":"ann-x"}']);
    assert.match(String(reasons[0]), /closed with 1012/);
  } finally {
    await fake.server.shutdown();
  }
});

for (
  const [code, status] of [[1008, 401], [1003, 400]] as const
) {
  Deno.test(`over a WebSocket: a socket closed with ${code} is the client's to fix, a ServiceError ${status}, not retried`, async () => {
    const fake = socketServer((_, socket) => socket.close(code));
    try {
      const error = await (async () => {
        for await (const _ of follow(fake.source("ann-x"))) break;
      })().catch((e) => e);
      assert.ok(error instanceof ServiceError, String(error));
      assert.equal(error.status, status);
      assert.equal(fake.urls.length, 1);
    } finally {
      await fake.server.shutdown();
    }
  });
}

Deno.test("a server that does not upgrade is followed as server-sent events by default, and only retried when a WebSocket was asked for", async () => {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req) =>
      req.headers.get("upgrade") === "websocket"
        ? new Response("no", { status: 400 })
        : new Response("retry: 5\n\nid: 3\nevent: message\ndata: {}\n\n", {
          headers: { "content-type": "text/event-stream" },
        }),
  );
  const source = {
    fetch,
    url: new URL(`http://127.0.0.1:${server.addr.port}/events`),
    token: () => undefined,
  };
  try {
    const ids: (string | undefined)[] = [];
    for await (const event of follow(source)) {
      ids.push(event.id);
      break;
    }
    assert.deepEqual(ids, ["3"]);

    const stop = new AbortController();
    const reasons: unknown[] = [];
    for await (
      const _ of follow(source, {
        transport: "websocket",
        signal: stop.signal,
        onReconnect(reason) {
          reasons.push(reason);
          stop.abort();
        },
      })
    ) assert.fail("no event comes without a socket");
    assert.match(String(reasons[0]), /could not be opened/);
  } finally {
    await server.shutdown();
  }
});

Deno.test("an event stream silent past idleMs (not even a heartbeat) is given up and resumed after its last id", async () => {
  let cancelled = 0;
  const silent = stalled("id: 1\ndata: a\n\n", () => void cancelled++);
  // Heartbeats keep a quiet stream: comments only, each within idleMs.
  let beats: ReturnType<typeof setInterval> | undefined;
  const beating = () =>
    new Response(
      new ReadableStream({
        start(controller) {
          beats = setInterval(
            () => controller.enqueue(new TextEncoder().encode(": beat\n\n")),
            50,
          );
          setTimeout(() => {
            clearInterval(beats);
            controller.enqueue(new TextEncoder().encode("id: 2\ndata: b\n\n"));
            controller.close();
          }, 600);
        },
        cancel: () => clearInterval(beats),
      }),
      { headers: { "content-type": "text/event-stream" } },
    );
  const { fetchFn, asked, times } = server([silent, beating]);
  const reasons: unknown[] = [];
  const got = await take(
    followEventStream(fetchFn, URL_, {
      idleMs: 200,
      onReconnect: (reason) => reasons.push(reason),
      // Bounds the test when the silence goes unnoticed.
      signal: AbortSignal.timeout(5_000),
    }),
    2,
  );
  assert.deepEqual(got, ["1:a", "2:b"]);
  assert.deepEqual(asked, [null, "1"]);
  assert.equal(cancelled, 1);
  assert.match(String(reasons[0]), /nothing for 200 ms/);
  // Given up after 200 ms of silence, then the usual pause of 1 to 2 s.
  assert.ok(times[1]! - times[0]! >= 1200, `${times[1]! - times[0]!} ms`);
  // The heartbeats (every 50 ms for 600 ms) kept the second one.
  assert.equal(reasons.length, 1);
});

Deno.test("idleMs of 0, Infinity or past a timer's range keeps a silent stream: no reconnection", async () => {
  for (const idleMs of [0, Infinity, 3_000_000_000]) {
    const silent = stalled("id: 1\ndata: a\n\n");
    const { fetchFn, asked } = server([silent, silent]);
    const reasons: unknown[] = [];
    const got: string[] = [];
    for await (
      const event of followEventStream(fetchFn, URL_, {
        idleMs,
        onReconnect: (reason) => reasons.push(reason),
        signal: AbortSignal.timeout(300),
      })
    ) got.push(`${event.id}:${event.data}`);
    assert.deepEqual(got, ["1:a"], `idleMs ${idleMs}`);
    assert.deepEqual(reasons, [], `idleMs ${idleMs}`);
    assert.equal(asked.length, 1, `idleMs ${idleMs}`);
  }
});

Deno.test("a reconnection whose answer never comes (a stopped process accepting) is given up after idleMs too", async () => {
  const asked: (string | null)[] = [];
  const silent = stalled("id: 1\ndata: a\n\n");
  const fetchFn: typeof fetch = (_input, init) => {
    asked.push(new Headers(init?.headers).get("last-event-id"));
    if (asked.length === 1) return Promise.resolve(silent());
    if (asked.length === 2) {
      // No headers, ever: only the request's signal ends the wait.
      return new Promise((_, reject) =>
        init?.signal?.addEventListener(
          "abort",
          () => reject(new DOMException("aborted", "AbortError")),
        )
      );
    }
    return Promise.resolve(stream("id: 2\ndata: b\n\n")());
  };
  const reasons: unknown[] = [];
  const got = await take(
    followEventStream(fetchFn, URL_, {
      idleMs: 200,
      onReconnect: (reason) => reasons.push(reason),
      // Bounds the test when the wait goes unnoticed.
      signal: AbortSignal.timeout(8_000),
    }),
    2,
  );
  assert.deepEqual(got, ["1:a", "2:b"]);
  assert.deepEqual(asked, [null, "1", "1"]);
  assert.equal(reasons.length, 2);
  for (const reason of reasons) {
    assert.match(String(reason), /sent nothing for 200 ms/);
  }
});
