/** The client library against the real program, over HTTP. */

import assert from "node:assert/strict";
import {
  MessagingClient,
  QuoteClient,
  ServiceError,
} from "../../src/client/client.ts";
import { freePort, startServer } from "../_support/program.ts";

/** Asserts that `promise` fails with a {@linkcode ServiceError} of `status` and these entry descriptions. */
async function refused(
  promise: Promise<unknown>,
  status: number,
  descriptions: string[],
  message?: string,
) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof ServiceError, String(error));
    assert.equal(error.status, status);
    assert.deepEqual(error.errors.map((e) => e.description), descriptions);
    if (message !== undefined) assert.equal(error.message, message);
    return true;
  });
}

Deno.test("MessagingClient: every endpoint and every error it can meet", async () => {
  const server = await startServer([
    "--quiet",
    "--max-users=2",
    "--max-body-bytes=200",
  ]);
  try {
    // No trailing slash: the client must not lose the base path.
    const base = server.url.slice(0, -1);
    const jose = new MessagingClient(base);
    assert.equal(jose.name, undefined);
    await refused(jose.users(), 401, [], "Not registered");
    // A token without its name part names nobody, not most of itself.
    assert.equal(
      new MessagingClient(base, { token: "justsomestring" }).name,
      undefined,
    );

    const token = await jose.register("José");
    assert.match(token, /^José-[0-9a-f]{40}$/);
    assert.equal(jose.token, token);
    assert.equal(jose.name, "José");
    // The name travels as UTF-8 bytes in the header and authenticates.
    assert.deepEqual(await jose.users(), ["José"]);

    const other = new MessagingClient(base);
    await refused(other.register("José"), 400, ["This user exists!"]);
    await refused(other.register("a-b"), 400, [
      "Name must not contain '-': the token header is split at its first '-'",
    ]);
    await refused(other.register(""), 400, ["Name must not be empty"]);
    await other.register("ann");
    await refused(other.register("third"), 503, [
      "No more users can register: the user limit is reached",
    ]);

    await jose.post("olá");
    await jose.post("in red", { color: "red", fields: { mood: "good" } });
    assert.deepEqual(await other.messages(), [
      { mood: "good", text: "in red", color: "red", user: "José" },
      { text: "olá", color: "black", user: "José" },
    ]);
    await refused(
      jose.post("x", { color: "blue" as "red" }),
      400,
      ["only red and black supported"],
    );
    await refused(jose.post("x".repeat(300)), 413, [
      "Request body is larger than the limit of 200 bytes",
    ]);

    assert.equal(await jose.unregister(), "José");
    assert.equal(jose.token, undefined);
    const stale = new MessagingClient(base, { token });
    await refused(stale.users(), 401, [], "Unauthorized");
    await refused(stale.post("x"), 401, [], "Unauthorized");
    await refused(stale.unregister(), 401, [], "Unauthorized");
  } finally {
    await server.stop();
  }
});

Deno.test("QuoteClient: get, set, and both refusals at once", async () => {
  const server = await startServer(["--quiet", "--service=quote"]);
  try {
    const quote = new QuoteClient(server.url);
    assert.equal(await quote.get(), "Not set, yet !");
    await quote.set("Ok!");
    assert.equal(await quote.get(), "Ok!");
    await refused(quote.set("nope"), 400, [
      "Does not start with a majuscule",
      "Does not end properly",
    ]);
    assert.equal(await quote.get(), "Ok!");
    // The messaging service is not served here: its paths are 404.
    await refused(
      new MessagingClient(server.url).messages(),
      404,
      [],
      "Not Found",
    );
  } finally {
    await server.stop();
  }
});

Deno.test("past the rate limit a write fails as ServiceError 429 with the envelope and Retry-After in seconds", async () => {
  const server = await startServer(["--quiet", "--rate-limit=1/600"]);
  try {
    const quote = new QuoteClient(server.url);
    await quote.set("First.");
    const error = await quote.set("Second.").then(
      () => assert.fail("the second write passed"),
      (error: unknown) => error,
    );
    assert.ok(error instanceof ServiceError);
    assert.equal(error.status, 429);
    assert.equal(error.errors[0]?.name, "rate");
    assert.equal(error.retryAfterSeconds, 600);
    assert.equal(await quote.get(), "First.", "reads are never limited");
  } finally {
    await server.stop();
  }
});

Deno.test("a service that cannot be reached is fetch's TypeError, not a ServiceError", async () => {
  const client = new QuoteClient(`http://127.0.0.1:${freePort()}/`);
  await assert.rejects(client.get(), (error) => {
    assert.ok(error instanceof TypeError);
    assert.ok(!(error instanceof ServiceError));
    return true;
  });
});

Deno.test("events(): history then live messages with ids; after a dropped connection it resumes with Last-Event-ID and repeats nothing", async () => {
  const server = await startServer(["--quiet"]);
  try {
    const writer = new MessagingClient(server.url);
    await writer.register("writer");
    await writer.post("one");
    await writer.post("two");
    const sentIds: (string | null)[] = [];
    let connections = 0;
    // A fetch whose first stream breaks after its first two events, as a
    // flaky network would.
    const flaky: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      sentIds.push(new Headers(init?.headers).get("last-event-id"));
      if (++connections > 1 || res.body === null) return res;
      let seen = 0;
      const cut = res.body.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            controller.enqueue(chunk);
            const text = new TextDecoder().decode(chunk);
            seen += text.split("event: message").length - 1;
            if (seen >= 2) controller.error(new Error("network down"));
          },
        }),
      );
      return new Response(cut, { headers: res.headers });
    };
    const reader = new MessagingClient(server.url, { fetch: flaky });
    const reconnects: unknown[] = [];
    const stop = new AbortController();
    const seen: string[] = [];
    const ids: number[] = [];
    const iterator = reader.events({
      // The fetch is what breaks the connection: server-sent events.
      transport: "sse",
      signal: stop.signal,
      onReconnect: (reason) => reconnects.push(reason),
    });
    for await (const event of iterator) {
      assert.equal(event.type, "message");
      if (event.type !== "message") continue;
      seen.push(event.message.text);
      ids.push(event.id);
      if (seen.length === 2) await writer.post("three");
      if (seen.length === 3) break;
    }
    assert.deepEqual(seen, ["one", "two", "three"]);
    assert.deepEqual(ids, [1, 2, 3]);
    assert.equal(reconnects.length, 1);
    assert.deepEqual(sentIds, [null, "2"]);
  } finally {
    await server.stop();
  }
});

Deno.test("events() over SSE: a stopped program (SIGSTOP) is given up after idleMs of silence, and once it runs again the reader resumes and gets what was posted", async () => {
  const server = await startServer(["--quiet", "--heartbeat-ms=200"]);
  try {
    const writer = new MessagingClient(server.url);
    await writer.register("writer");
    await writer.post("one");
    const reconnects: unknown[] = [];
    const seen: string[] = [];
    let posted: Promise<unknown> | undefined;
    for await (
      const event of new MessagingClient(server.url).events({
        transport: "sse",
        idleMs: 1_000,
        // Bounds the test when the silence goes unnoticed.
        signal: AbortSignal.timeout(20_000),
        onReconnect: (reason) => {
          reconnects.push(reason);
          // The reader gave up on the stopped program: let it run again,
          // and post while the reader waits to come back.
          server.process.kill("SIGCONT");
          posted ??= writer.post("two");
        },
      })
    ) {
      if (event.type !== "message") continue;
      seen.push(event.message.text);
      // Heartbeats every 200 ms kept the stream past idleMs until now.
      if (seen.length === 1) {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        assert.equal(reconnects.length, 0, String(reconnects[0]));
        server.process.kill("SIGSTOP");
      }
      if (seen.length === 2) break;
    }
    await posted;
    assert.deepEqual(seen, ["one", "two"]);
    assert.equal(reconnects.length, 1);
    assert.match(String(reconnects[0]), /sent nothing for 1000 ms/);
  } finally {
    server.process.kill("SIGCONT");
    await server.stop();
  }
});

Deno.test("QuoteClient.events(): the quote, then each replacement; a URL without the service is a ServiceError", async () => {
  const server = await startServer(["--quiet", "--service=quote"]);
  try {
    const quotes = new QuoteClient(server.url);
    const seen: string[] = [];
    for await (const quote of quotes.events()) {
      seen.push(quote);
      if (seen.length === 1) await quotes.set("Fresh!");
      if (seen.length === 2) break;
    }
    assert.deepEqual(seen, ["Not set, yet !", "Fresh!"]);
    const messaging = new MessagingClient(server.url);
    await assert.rejects(async () => {
      for await (const _ of messaging.events()) break;
    }, (error) => error instanceof ServiceError && error.status === 404);
  } finally {
    await server.stop();
  }
});

for (const transport of ["websocket", "sse"] as const) {
  Deno.test(`events() over ${transport} of a client holding a token makes its user online, and tells onPresence of each change; online() lists who is online`, async () => {
    const server = await startServer(["--quiet"]);
    try {
      const ivan = new MessagingClient(server.url);
      const ann = new MessagingClient(server.url);
      await ivan.register("Иван");
      await ann.register("ann");
      await refused(new MessagingClient(server.url).online(), 401, []);
      assert.deepEqual(await ann.online(), []);
      const watching = new AbortController();
      const seen: unknown[] = [];
      // The watcher is live once it has the message posted before it came.
      await ann.post("before the watcher");
      const live = Promise.withResolvers<void>();
      const watcher = (async () => {
        for await (
          const _ of new MessagingClient(server.url).events({
            signal: watching.signal,
            onPresence: (change) => seen.push(change),
          })
        ) live.resolve();
      })();
      await live.promise;
      const following = new AbortController();
      const follower = (async () => {
        for await (
          const _ of ivan.events({ signal: following.signal, transport })
        );
      })();
      const until = async (count: number) => {
        for (let i = 0; i < 200 && seen.length < count; i++) {
          await new Promise((r) => setTimeout(r, 25));
        }
      };
      await until(1);
      assert.deepEqual(await ann.online(), ["Иван"]);
      following.abort();
      await follower;
      await until(2);
      await ivan.unregister();
      await until(3);
      watching.abort();
      await watcher;
      assert.deepEqual(seen, [
        { name: "Иван", online: true },
        { name: "Иван", online: false },
        { name: "Иван", registered: false },
      ]);
    } finally {
      await server.stop();
    }
  });
}
