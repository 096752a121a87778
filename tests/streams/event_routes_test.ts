/**
 * The event streams at handler level, on both stores: ids, catch-up with and
 * without `Last-Event-ID`, gaps, the quote stream, heartbeats, `HEAD`, the
 * stream cap, slow readers, and ending every stream when the server stops.
 */
import assert from "node:assert/strict";
import { createHandler, type HandlerOptions } from "../../src/program/app.ts";
import { MemoryStore } from "../../src/store/memory_store.ts";
import {
  type Store,
  type StoreEvent,
  StoreUnavailableError,
} from "../../src/store/store.ts";
import {
  idleTimeoutSeconds,
  NotFollowing,
} from "../../src/streams/event_routes.ts";
import { call, connectionFrom, storeTest } from "../_support/call.ts";
import { type EventReader, readEvents } from "../_support/event_reader.ts";
import { itemAt } from "../_support/item_at.ts";

const STREAM_TYPE = "text/event-stream; charset=utf-8";

function app(store: Store, options: HandlerOptions = {}) {
  return createHandler({ store, heartbeatMs: 60_000, ...options });
}

async function open(
  handler: (req: Request) => Response | Promise<Response>,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ res: Response; events: EventReader }> {
  const res = await handler(
    new Request(`http://service.test${path}`, { headers }),
  );
  assert.equal(res.status, 200, await (res.status === 200 ? "" : res.text()));
  assert.equal(res.headers.get("content-type"), STREAM_TYPE);
  assert.equal(res.headers.get("cache-control"), "no-cache");
  return { res, events: readEvents(res.body!) };
}

async function registered(
  handler: (req: Request) => Response | Promise<Response>,
  name = "ann",
) {
  return (await call(handler, "POST", "/users", { body: name })).json.token;
}

async function post(
  handler: (req: Request) => Response | Promise<Response>,
  token: string,
  text: string,
  extra: Record<string, unknown> = {},
) {
  const res = await call(handler, "POST", "/", {
    token,
    body: JSON.stringify({ text, ...extra }),
  });
  assert.equal(res.status, 200, res.text);
}

const ids = (items: { id?: string }[]) => items.map((e) => Number(e.id));
const texts = (items: { data: string }[]) =>
  items.map((e) => JSON.parse(e.data).text);

storeTest(
  "without Last-Event-ID: retry, then what GET / shows oldest first with ids, then each new message once",
  async (store) => {
    const handler = app(store);
    const token = await registered(handler);
    for (let i = 1; i <= 7; i++) await post(handler, token, `m${i}`);
    const { events } = await open(handler, "/events");
    assert.deepEqual(await events.next(), { type: "retry", ms: 1000 });
    const first = await events.events(5);
    assert.deepEqual(ids(first), [3, 4, 5, 6, 7]);
    assert.deepEqual(texts(first), ["m3", "m4", "m5", "m6", "m7"]);
    assert.ok(first.every((e) => e.type === "event" && e.event === "message"));
    const shown = (await call(handler, "GET", "/")).json.toReversed();
    assert.deepEqual(first.map((e) => JSON.parse(e.data)), shown);
    await post(handler, token, "m8", { color: "red", mood: "ok" });
    const live = await events.event();
    assert.equal(live.id, "8");
    assert.deepEqual(JSON.parse(live.data), {
      text: "m8",
      color: "red",
      mood: "ok",
      user: "ann",
    });
    await events.close();
  },
);

storeTest(
  "with Last-Event-ID: what is retained above it, a gap for what is gone, and ids that count as absent",
  async (store) => {
    const handler = app(store);
    const token = await registered(handler);
    for (let i = 1; i <= 12; i++) await post(handler, token, `m${i}`);
    const resume = async (id: string) => {
      const { events } = await open(handler, "/events", {
        "last-event-id": id,
      });
      await post(handler, token, `after ${id}`);
      const items = [];
      for (;;) {
        const item = await events.next();
        if (item?.type === "event") {
          items.push(item);
          if (JSON.parse(item.data).text === `after ${id}`) break;
        }
      }
      await events.close();
      return items;
    };
    const retained = await resume("9");
    assert.deepEqual(ids(retained), [10, 11, 12, 13]);
    const upToDate = await resume("13");
    assert.deepEqual(ids(upToDate), [14]);
    const gone = await resume("2");
    const gap = itemAt(gone, 0);
    assert.equal(gap.event, "gap");
    // 14 messages so far, history 7: ids 8..14 retained, 3..7 gone.
    assert.deepEqual(JSON.parse(gap.data), { missed: 5 });
    assert.deepEqual(ids(gone.slice(1)), [8, 9, 10, 11, 12, 13, 14, 15]);
    // Not a whole number, or above the newest id: as if absent (newest 5).
    const garbage = await resume("abc");
    assert.deepEqual(ids(garbage), [11, 12, 13, 14, 15, 16]);
    const ahead = await resume("999");
    assert.deepEqual(ids(ahead), [12, 13, 14, 15, 16, 17]);
    // A whole number is one however many zeros lead it.
    const padded = await resume(`${"0".repeat(30)}17`);
    assert.deepEqual(ids(padded), [18]);
  },
  { history: 7 },
);

storeTest("a refused post makes no event", async (store) => {
  const handler = app(store);
  const token = await registered(handler);
  const { events } = await open(handler, "/events");
  await events.next(); // retry
  for (const body of ["nope", '{"x":1}', '{"text":"t","color":"blue"}']) {
    assert.equal(
      (await call(handler, "POST", "/", { token, body })).status,
      400,
    );
  }
  assert.equal(
    (await call(handler, "POST", "/", { body: '{"text":"t"}' })).status,
    401,
  );
  await post(handler, token, "accepted");
  const only = await events.event();
  assert.equal(only.id, "1");
  assert.equal(JSON.parse(only.data).text, "accepted");
  await events.close();
});

storeTest(
  "the quote stream opens with the quote, then each replacement; a refused one makes no event",
  async (store) => {
    const handler = app(store);
    const { events } = await open(handler, "/quote/events");
    assert.deepEqual(await events.next(), { type: "retry", ms: 1000 });
    const initial = await events.event();
    assert.deepEqual(
      { event: initial.event, id: initial.id, data: initial.data },
      { event: "quote", id: undefined, data: '"Not set, yet !"' },
    );
    assert.equal(
      (await call(handler, "POST", "/quote", { body: "bad" })).status,
      400,
    );
    await call(handler, "POST", "/quote", { body: 'Say "hi"\nnow!' });
    const replaced = await events.event();
    assert.equal(JSON.parse(replaced.data), 'Say "hi"\nnow!');
    await events.close();
  },
);

storeTest(
  "a quiet stream gets a comment line every heartbeat",
  async (store) => {
    const handler = app(store, { heartbeatMs: 50 });
    const { events } = await open(handler, "/events");
    await events.next(); // retry
    const item = await events.next(2000);
    assert.equal(item?.type, "comment");
    await events.close();
  },
);

storeTest(
  "HEAD answers a stream's headers at once with no body; other methods are 405",
  async (store) => {
    const handler = app(store);
    for (const path of ["/events", "/quote/events"]) {
      const res = await handler(
        new Request(`http://service.test${path}`, { method: "HEAD" }),
      );
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), STREAM_TYPE);
      assert.equal(res.headers.get("cache-control"), "no-cache");
      assert.equal(await res.text(), "");
      const post = await call(handler, "POST", path, { body: "x" });
      assert.equal(post.status, 405);
      assert.equal(post.headers.get("allow"), "GET, HEAD");
    }
  },
);

storeTest(
  "past --max-streams a stream is 503 with the envelope, and a place frees when a reader leaves",
  async (store) => {
    const handler = app(store, { maxStreams: 2 });
    const a = await open(handler, "/events");
    const b = await open(handler, "/quote/events");
    const refused = await call(handler, "GET", "/events");
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("retry-after"), "5");
    assert.equal(refused.json.status, "error");
    assert.equal(refused.json.errors[0].location, "url");
    assert.equal(refused.json.errors[0].name, "events");
    await a.events.close();
    const c = await open(handler, "/events");
    await Promise.all([b.events.close(), c.events.close()]);
  },
);

storeTest(
  "on a shared port (--reuse-port) a full process asks for a retry after 1 s, and a client past its own cap still after 5",
  async (store) => {
    const handler = app(store, {
      maxStreams: 2,
      maxStreamsPerClient: 1,
      reusePort: true,
    });
    const from = (client: string) =>
      handler(
        new Request("http://service.test/events"),
        connectionFrom(client),
      );
    const a = await from("192.0.2.1");
    const clientFull = await from("192.0.2.1");
    assert.equal(clientFull.status, 429);
    assert.equal(clientFull.headers.get("retry-after"), "5");
    const b = await from("192.0.2.2");
    const full = await from("192.0.2.3");
    assert.equal(full.status, 503);
    assert.equal(full.headers.get("retry-after"), "1");
    // A client that keeps its connection would ask the same full process again.
    assert.equal(full.headers.get("connection"), "close");
    await Promise.all([a.body?.cancel(), b.body?.cancel()]);
  },
);

storeTest(
  "past --max-streams-per-client a client's next stream is 429; other clients still open, and a place frees when its reader leaves",
  async (store) => {
    const handler = app(store, { maxStreamsPerClient: 2 });
    const openFrom = (client: string, path = "/events") =>
      handler(
        new Request(`http://service.test${path}`),
        connectionFrom(client),
      );
    const first = await openFrom("192.0.2.1");
    const second = await openFrom("192.0.2.1", "/quote/events");
    assert.equal((await openFrom("192.0.2.2")).status, 200);
    const refused = await openFrom("192.0.2.1");
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get("retry-after"), "5");
    assert.deepEqual(await refused.json(), {
      status: "error",
      errors: [{
        location: "url",
        name: "events",
        description:
          "Too many event streams are open from this client; close one first",
      }],
    });
    await first.body!.cancel();
    const again = await openFrom("192.0.2.1");
    assert.equal(again.status, 200);
    // Without connection information clients cannot be told apart, so
    // only the process-wide cap applies.
    const anonymous = [];
    for (let i = 0; i < 3; i++) {
      const res = await handler(new Request("http://service.test/events"));
      assert.equal(res.status, 200);
      anonymous.push(res.body!);
    }
    await Promise.all(
      [second.body!, again.body!, ...anonymous].map((body) => body.cancel()),
    );
  },
);

storeTest(
  "a reader that stops reading is cut off past 1 MiB waiting; the others go on",
  async (store) => {
    const handler = app(store);
    const token = await registered(handler);
    const slow = await handler(new Request("http://service.test/events"));
    const slowReader = slow.body!.getReader();
    const { events } = await open(handler, "/events");
    const big = "x".repeat(60_000);
    for (let i = 0; i < 25; i++) await post(handler, token, big);
    const received = await events.events(25);
    assert.equal(received.length, 25);
    // The slow reader finds its stream ended (erred) after what it could take.
    let total = 0;
    await assert.rejects(async () => {
      for (;;) {
        const { done, value } = await slowReader.read();
        if (done) break;
        total += value.byteLength;
      }
    });
    assert.ok(total < 1024 * 1024, `the slow reader got ${total} bytes`);
    await events.close();
  },
);

storeTest("stopping ends every stream and refuses new ones", async (store) => {
  const stop = new AbortController();
  const handler = app(store, { stopSignal: stop.signal });
  const a = await open(handler, "/events");
  const b = await open(handler, "/quote/events");
  await a.events.next();
  await b.events.next();
  stop.abort();
  for (const { events } of [a, b]) {
    let item;
    do item = await events.next(); while (item !== null);
  }
  assert.equal((await call(handler, "GET", "/events")).status, 503);
});

/** `store`, counting the subscriptions to it that are still on. */
function countingSubscriptions(store: Store) {
  let active = 0;
  const counted = new Proxy(store, {
    get(target, key) {
      if (key === "subscribe") {
        return (listener: Parameters<Store["subscribe"]>[0]) => {
          active++;
          const unsubscribe = target.subscribe(listener);
          let on = true;
          return () => {
            if (on) active--;
            on = false;
            unsubscribe();
          };
        };
      }
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { store: counted, active: () => active };
}

storeTest(
  "a handler nobody follows holds no subscription to its store: building handlers over one store leaks nothing, and a stream subscribes only while it is open",
  async (store) => {
    const { store: counted, active } = countingSubscriptions(store);
    for (let i = 0; i < 50; i++) app(counted);
    assert.equal(active(), 0);
    const handler = app(counted);
    const token = await registered(handler);
    await post(handler, token, "before anyone follows");
    assert.equal(active(), 0);

    const first = await open(handler, "/events");
    const second = await open(handler, "/events");
    const quote = await open(handler, "/quote/events");
    assert.equal(active(), 2, "one subscription per followed topic");
    await first.events.close();
    assert.equal(active(), 2, "the other message reader still needs it");
    await post(handler, token, "to the one left");
    await second.events.events(1); // what it caught up with
    const live = await second.events.event();
    assert.equal(JSON.parse(live.data).text, "to the one left");
    await second.events.close();
    await quote.events.close();
    assert.equal(active(), 0);

    // Following again subscribes again, and misses nothing after it opens.
    const again = await open(handler, "/events");
    assert.equal(active(), 1);
    await post(handler, token, "after coming back");
    const items = await again.events.events(3);
    assert.equal(JSON.parse(items.at(-1)!.data).text, "after coming back");
    await again.events.close();
    assert.equal(active(), 0);
  },
);

/**
 * A memory store whose subscription can be lost and made anew, as a Redis
 * store's can: a change made while it is lost reaches no listener. `lose`
 * tells listeners `reset` as the Redis store does; `drop` loses it silently
 * (only the epoch can tell).
 */
class FlakySubscription extends MemoryStore {
  #epoch: number | undefined = 0;
  #listeners = new Set<(event: StoreEvent) => void>();
  /** Run inside every catch-up read, after it has read. */
  duringCatchUp: () => void = () => {};

  override subscribe(listener: (event: StoreEvent) => void): () => void {
    this.#listeners.add(listener);
    const stop = super.subscribe((event) => {
      if (this.#epoch !== undefined) listener(event);
    });
    return () => {
      this.#listeners.delete(listener);
      stop();
    };
  }

  override subscriptionEpoch(): number | undefined {
    return this.#epoch;
  }

  override recentMessages(afterId: number, limit?: number) {
    const recent = super.recentMessages(afterId, limit);
    this.duringCatchUp();
    return recent;
  }

  lose(): void {
    this.drop();
    for (const listener of this.#listeners) listener({ kind: "reset" });
  }

  drop(): void {
    this.#epoch = undefined;
  }

  restore(epoch: number): void {
    this.#epoch = epoch;
  }
}

async function refusedToFollow(res: Response): Promise<void> {
  assert.equal(res.status, 503);
  assert.ok(Number(res.headers.get("retry-after")) >= 1);
  const body = await res.json();
  assert.equal(body.status, "error");
  assert.deepEqual(
    [body.errors[0].location, body.errors[0].name],
    ["url", "events"],
  );
}

Deno.test("while the store cannot hear of changes, no stream opens: 503 with Retry-After, on both streams", async () => {
  const store = new FlakySubscription();
  const handler = app(store);
  store.drop();
  for (const path of ["/events", "/quote/events"]) {
    await refusedToFollow(
      await handler(new Request(`http://service.test${path}`)),
    );
  }
  store.restore(1);
  const { events } = await open(handler, "/events");
  await events.close();
});

/** The Retry-After of `GET /events`, which must be refused as not following. */
async function refusedRetryAfter(
  handler: (req: Request) => Response | Promise<Response>,
): Promise<number> {
  const res = await handler(new Request("http://service.test/events"));
  await refusedToFollow(res);
  return Number(res.headers.get("retry-after"));
}

Deno.test("while the store cannot hear of changes, Retry-After grows with how long this process has refused: 1 s at first, again 1 s after it follows again", async () => {
  const store = new FlakySubscription();
  const handler = app(store);
  const retryAfter = () => refusedRetryAfter(handler);
  store.drop();
  const start = performance.now();
  assert.equal(await retryAfter(), 1);
  // Readers that retry as told keep asking through a long outage.
  while (performance.now() < start + 2_100) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    await retryAfter();
  }
  // 3 after 2.1 s; a loaded host may have taken longer to get here.
  const grown = await retryAfter();
  const refusing = Math.ceil((performance.now() - start) / 1000);
  assert.ok(grown >= 3 && grown <= refusing, `${grown} after ${refusing} s`);
  store.restore(1);
  const { events } = await open(handler, "/events");
  await events.close();
  store.drop();
  assert.equal(await retryAfter(), 1);
});

Deno.test("Retry-After counts anew in a second outage even when no stream was served between the two", async () => {
  const store = new FlakySubscription();
  const handler = app(store);
  const retryAfter = () => refusedRetryAfter(handler);
  store.lose();
  assert.equal(await retryAfter(), 1);
  // Refused long enough that the count has grown.
  while (await retryAfter() < 2) {
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  // Back, then lost again, with nobody asking for a stream meanwhile.
  store.restore(1);
  store.lose();
  assert.equal(await retryAfter(), 1);
});

Deno.test("the wait asked while not following: seconds refused so far, 1 to 32, anew after a minute without refusals or once following", () => {
  const wait = (deaf: NotFollowing, now: number) =>
    Number(deaf.refusal(now).getResponse().headers.get("retry-after"));
  const deaf = new NotFollowing(new MemoryStore());
  assert.equal(wait(deaf, 1_000), 1);
  assert.equal(wait(deaf, 1_500), 1);
  assert.equal(wait(deaf, 3_200), 3);
  for (let t = 3_200; t <= 120_000; t += 30_000) wait(deaf, t);
  assert.equal(wait(deaf, 130_000), 32);
  // A pause longer than two of the longest waits: a new outage.
  assert.equal(wait(deaf, 130_000 + 64_001), 1);
  assert.equal(wait(deaf, 200_000), 6);
  deaf.following();
  assert.equal(wait(deaf, 200_001), 1);
});

Deno.test("HEAD on a stream route answers the status GET would: 503 when full or not following, 429 past the client's cap, each with Retry-After", async () => {
  const store = new FlakySubscription();
  const handler = app(store, { maxStreams: 2, maxStreamsPerClient: 1 });
  const at = (method: string, client: string, path = "/events") =>
    handler(
      new Request(`http://service.test${path}`, { method }),
      connectionFrom(client),
    );
  const first = await at("GET", "192.0.2.1");
  const clientFull = await at("HEAD", "192.0.2.1");
  assert.equal(clientFull.status, 429);
  assert.equal(clientFull.headers.get("retry-after"), "5");
  assert.equal((await at("HEAD", "192.0.2.2")).status, 200);
  const second = await at("GET", "192.0.2.2");
  for (const path of ["/events", "/quote/events"]) {
    const full = await at("HEAD", "192.0.2.3", path);
    assert.equal(full.status, 503);
    assert.equal(full.headers.get("retry-after"), "5");
    assert.equal((await at("GET", "192.0.2.3", path)).status, 503);
  }
  await Promise.all([first.body?.cancel(), second.body?.cancel()]);
  store.drop();
  for (const path of ["/events", "/quote/events"]) {
    const deaf = await at("HEAD", "192.0.2.3", path);
    assert.equal(deaf.status, 503);
    assert.ok(Number(deaf.headers.get("retry-after")) >= 1);
  }
});

Deno.test("a subscription lost during a stream's catch-up: the reader is told to come back (503), not answered a stream that cannot follow", async () => {
  const store = new FlakySubscription();
  const handler = app(store);
  const token = await registered(handler);
  await post(handler, token, "m1");
  store.duringCatchUp = () => store.lose();
  await refusedToFollow(
    await handler(
      new Request("http://service.test/events", {
        headers: { "last-event-id": "1" },
      }),
    ),
  );
});

Deno.test("a subscription lost and back again between catch-up and going live: the message stored meanwhile is not skipped, the reader is told to come back", async () => {
  const store = new FlakySubscription();
  const handler = app(store);
  const token = await registered(handler);
  await post(handler, token, "m1");
  store.duringCatchUp = () => {
    store.duringCatchUp = () => {};
    store.drop();
    // Stored while nobody hears: neither in the catch-up nor on the stream.
    store.addMessage('{"text":"m2"}');
    store.restore(1);
  };
  const res = await handler(
    new Request("http://service.test/events", {
      headers: { "last-event-id": "1" },
    }),
  );
  await refusedToFollow(res);
  // Coming back, it gets what it would have missed.
  const { events } = await open(handler, "/events", { "last-event-id": "1" });
  assert.deepEqual(texts(await events.events(1)), ["m2"]);
  await events.close();
});

/** The headers of a WebSocket upgrade, as a browser at `origin` sends them. */
function upgradeHeaders(origin?: string): Record<string, string> {
  return {
    upgrade: "websocket",
    connection: "Upgrade",
    "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    "sec-websocket-version": "13",
    ...(origin === undefined ? {} : { origin }),
  };
}

Deno.test("while the store cannot hear of changes, no WebSocket opens either: 503 with Retry-After, before any upgrade", async () => {
  const store = new FlakySubscription();
  const handler = app(store);
  store.drop();
  for (const path of ["/events", "/quote/events"]) {
    await refusedToFollow(
      await handler(
        new Request(`http://service.test${path}`, {
          headers: upgradeHeaders(),
        }),
      ),
    );
  }
});

/** Redis gone: reading fails too while the subscription is down. */
class GoneStore extends FlakySubscription {
  override tokenOf(name: string): string | undefined {
    if (this.subscriptionEpoch() === undefined) {
      throw new StoreUnavailableError("Redis is unavailable");
    }
    return super.tokenOf(name);
  }
}

Deno.test("while the store can be neither heard nor read, a reader with a token, or whose catch-up fails, gets the envelope, not the bare 503", async () => {
  const store = new GoneStore();
  const handler = app(store);
  const token = await registered(handler);
  store.drop();
  for (const headers of [{}, upgradeHeaders()]) {
    await refusedToFollow(
      await handler(
        new Request("http://service.test/events", {
          headers: { ...headers, "x-messaging-token": token },
        }),
      ),
    );
  }
  store.restore(1);
  store.duringCatchUp = () => {
    store.lose();
    throw new StoreUnavailableError("the connection to Redis was lost");
  };
  await refusedToFollow(
    await handler(new Request("http://service.test/events")),
  );
});

Deno.test("a browser's upgrade from a foreign origin is refused 403 and opens nothing; --cors-origin lets one in", async () => {
  const store = new MemoryStore();
  const handler = app(store, { corsOrigins: ["https://app.example"] });
  for (const path of ["/events", "/quote/events"]) {
    const res = await handler(
      new Request(`http://service.test${path}`, {
        headers: upgradeHeaders("https://evil.example"),
      }),
    );
    assert.equal(res.status, 403);
    assert.deepEqual(await res.json(), { status: 403, message: "Forbidden" });
  }
  // An event stream is no WebSocket: CORS governs it, as every route.
  const { events } = await open(handler, "/events", {
    origin: "https://evil.example",
  });
  await events.close();
});

Deno.test("an Upgrade header is a list: websocket anywhere in it, in any case, asks for a socket; other protocols alone get an event stream", async () => {
  const handler = app(new MemoryStore());
  for (
    const upgrade of [
      "websocket",
      "WebSocket",
      "websocket, h2c",
      "h2c,websocket",
    ]
  ) {
    // A foreign origin's socket is refused, so the answer tells which it took.
    const res = await handler(
      new Request("http://service.test/events", {
        headers: { ...upgradeHeaders("https://evil.example"), upgrade },
      }),
    );
    assert.equal(res.status, 403, upgrade);
    await res.body?.cancel();
  }
  for (const upgrade of ["h2c", "websockets", "not-websocket"]) {
    const { events } = await open(handler, "/events", { upgrade });
    await events.close();
  }
});

Deno.test("an upgrade request Deno cannot upgrade (no key) is answered 400, and counts no stream", async () => {
  const handler = app(new MemoryStore(), { maxStreams: 1 });
  const headers = upgradeHeaders();
  delete headers["sec-websocket-key"];
  const res = await handler(
    new Request("http://service.test/events", { headers }),
  );
  assert.equal(res.status, 400);
  assert.equal((await res.json()).errors[0].name, "upgrade");
  const { events } = await open(handler, "/events");
  await events.close();
});

storeTest(
  "?lastEventId=N resumes an event stream as Last-Event-ID does; the header wins when both are sent",
  async (store) => {
    const handler = app(store);
    const token = await registered(handler);
    for (let i = 1; i <= 4; i++) await post(handler, token, `m${i}`);
    const byQuery = await open(handler, "/events?lastEventId=2");
    assert.deepEqual(ids(await byQuery.events.events(2)), [3, 4]);
    await byQuery.events.close();
    const both = await open(handler, "/events?lastEventId=1", {
      "last-event-id": "3",
    });
    assert.deepEqual(ids(await both.events.events(1)), [4]);
    await both.events.close();
    // A header that is no id counts as absent, and still wins: the newest.
    const bad = await open(handler, "/events?lastEventId=3", {
      "last-event-id": "x",
    });
    assert.deepEqual(ids(await bad.events.events(4)), [1, 2, 3, 4]);
    await bad.events.close();
  },
);

Deno.test("maxStreamBufferBytes: a reader that never reads is ended once all waiting passes it, and a reader that reads gets every message", async () => {
  const handler = app(new MemoryStore(), { maxStreamBufferBytes: 2_000 });
  const token = await registered(handler);
  const stalled = await handler(new Request("http://service.test/events"));
  const { events } = await open(handler, "/events");
  await events.next();
  for (let i = 0; i < 10; i++) {
    await post(handler, token, `${i}`.repeat(300));
    assert.equal(texts([await events.event()])[0], `${i}`.repeat(300));
  }
  // The stream was ended rather than left holding the ten messages.
  const reader = stalled.body!.getReader();
  await assert.rejects(async () => {
    for (let i = 0; i < 100; i++) if ((await reader.read()).done) return;
  });
  await events.close();
});

Deno.test("a thousand readers opening at once on 300 KB of the same catch-up are all served under the default total bound", async () => {
  const handler = app(new MemoryStore(), {
    maxBodyBytes: 70_000,
    maxStreams: 2_000,
  });
  const token = await registered(handler);
  const text = (i: number) => `${i}`.repeat(60_000);
  for (let i = 1; i <= 5; i++) await post(handler, token, text(i));
  // All open before any reads: each holds the whole catch-up.
  const opened = await Promise.all(
    Array.from({ length: 1_000 }, () => open(handler, "/events")),
  );
  for (const { events } of opened) {
    assert.deepEqual(ids(await events.events(5)), [1, 2, 3, 4, 5]);
  }
  await post(handler, token, "live");
  for (const { events } of opened) {
    assert.deepEqual(texts([await events.event()]), ["live"]);
    await events.close();
  }
});

Deno.test("past maxStreamBufferBytes the stalled reader furthest behind is ended first; what it alone held frees the rest", async () => {
  // Nine messages of ~1.1 KB pass 9,000 bytes; eight do not.
  const handler = app(new MemoryStore(), { maxStreamBufferBytes: 9_000 });
  const token = await registered(handler);
  for (let i = 1; i <= 10; i++) await post(handler, token, "x".repeat(1_000));
  const near = await handler(
    new Request("http://service.test/events?lastEventId=5"),
  );
  const far = await handler(
    new Request("http://service.test/events?lastEventId=2"),
  );
  const { events } = await open(handler, "/events?lastEventId=10");
  await post(handler, token, "x".repeat(1_000));
  assert.deepEqual(ids([await events.event()]), [11]);
  await assert.rejects(async () => {
    const reader = far.body!.getReader();
    for (let i = 0; i < 100; i++) if ((await reader.read()).done) return;
  });
  const kept = readEvents(near.body!);
  assert.deepEqual(ids(await kept.events(6)), [6, 7, 8, 9, 10, 11]);
  await kept.close();
  await events.close();
});

/** The one description of a 503 answered to `GET /events`, after checking its shape. */
async function refusal(res: Response): Promise<string> {
  assert.equal(res.status, 503);
  const body = await res.json();
  assert.deepEqual(
    [body.errors.length, body.errors[0].location, body.errors[0].name],
    [1, "url", "events"],
  );
  return body.errors[0].description;
}

Deno.test("a catch-up larger than the bound for one reader is sent whole, and the bound counts from where it ends", async () => {
  const handler = app(new MemoryStore(), { maxBodyBytes: 400_000 });
  const token = await registered(handler);
  const big = (i: number) => `${i % 10}`.repeat(300_000);
  // Five messages of 300 KB: the catch-up without an id, 1.5 MB, is over 1 MiB.
  for (let i = 1; i <= 5; i++) await post(handler, token, big(i));
  const reader = await open(handler, "/events");
  await reader.events.next(); // retry
  assert.deepEqual(ids(await reader.events.events(5)), [1, 2, 3, 4, 5]);
  // Never read from: its body is not pulled.
  const stalled = await handler(new Request("http://service.test/events"));
  assert.equal(stalled.status, 200);
  const streamsOpen = async () =>
    Number(
      (await call(handler, "GET", "/metrics")).text.match(
        /^lms_event_streams_open (\d+)$/m,
      )?.[1],
    );
  assert.equal(await streamsOpen(), 2);
  // Three more wait for the stalled reader on top of its catch-up: still
  // within 1 MiB of where the catch-up ended, then the fourth passes it.
  for (let i = 6; i <= 9; i++) {
    await post(handler, token, big(i));
    assert.deepEqual(ids(await reader.events.events(1)), [i]);
    assert.equal(await streamsOpen(), i < 9 ? 2 : 1, `after message ${i}`);
  }
  await reader.events.close();
  await stalled.body?.cancel().catch(() => {});
});

Deno.test("a catch-up cut because all readers together had too much waiting is answered 503 with Retry-After, saying so", async () => {
  const handler = app(new MemoryStore(), { maxStreamBufferBytes: 2_000 });
  const token = await registered(handler);
  await post(handler, token, "x".repeat(3_000));
  const res = await handler(new Request("http://service.test/events"));
  assert.ok(Number(res.headers.get("retry-after")) >= 1);
  const description = await refusal(res);
  assert.match(description, /Too much is waiting for this server's readers/);
  assert.doesNotMatch(description, /cannot follow/);
});

Deno.test("each WebSocket draws its idle timeout from 16 steps, twice the heartbeat to a quarter more, so sockets opened together are pinged in 16 waves", () => {
  assert.equal(idleTimeoutSeconds(15_000, () => 0), 30);
  assert.equal(idleTimeoutSeconds(15_000, () => 0.999_999), 37.032);
  const drawn = new Set(
    Array.from({ length: 2_000 }, () => idleTimeoutSeconds(15_000)),
  );
  assert.equal(drawn.size, 16);
  const steps = [...drawn].sort((a, b) => a - b);
  for (const [i, seconds] of steps.entries()) {
    assert.ok(seconds >= 30 && seconds < 37.5, String(seconds));
    // Deno pings after half: waves about a quarter of a second apart.
    if (i > 0) assert.ok(seconds - steps[i - 1]! > 0.45, String(steps));
  }
});
