/**
 * Presence at handler level, on both stores: `GET /users/online`, event
 * streams opened with `X-Messaging-Token`, the `presence` events every
 * reader gets, and what unregistering does to all three.
 */
import assert from "node:assert/strict";
import { createHandler } from "../../src/program/app.ts";
import { PRESENCE_PACE_MS } from "../../src/streams/presence_pacing.ts";
import type { Handler } from "../../src/http/router.ts";
import type { Store } from "../../src/store/store.ts";
import { call, CONTENT_TYPE, storeTest, utf8Header } from "../_support/call.ts";
import {
  type EventReader,
  readEvents,
  type StreamEvent,
} from "../_support/event_reader.ts";

function app(store: Store): Handler {
  return createHandler({ store, heartbeatMs: 60_000 });
}

async function register(handler: Handler, name: string): Promise<string> {
  const res = await call(handler, "POST", "/users", { body: name });
  assert.equal(res.status, 200, res.text);
  return res.json.token;
}

/** Opens `GET /events`, as `token`'s user when given. */
async function follow(
  handler: Handler,
  token?: string,
  headers: Record<string, string> = {},
): Promise<EventReader> {
  if (token !== undefined) headers["x-messaging-token"] = utf8Header(token);
  const res = await handler(
    new Request("http://service.test/events", { headers }),
  );
  assert.equal(res.status, 200, res.status === 200 ? "" : await res.text());
  return readEvents(res.body!);
}

/** The next `presence` event's data, skipping messages. */
async function nextPresence(events: EventReader): Promise<unknown> {
  for (let i = 0; i < 100; i++) {
    const event = await events.event();
    if (event.event === "presence") {
      assert.equal(event.id, undefined, "a presence event has no id");
      return JSON.parse(event.data);
    }
  }
  throw new Error("no presence event among 100");
}

async function onlineOf(handler: Handler, token: string): Promise<string[]> {
  const res = await call(handler, "GET", "/users/online", { token });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
  return res.json.online;
}

/** Polls `GET /users/online` (every 10 ms, up to 5 s) until it lists exactly `names`. */
async function untilOnline(handler: Handler, token: string, names: string[]) {
  let online: string[] = [];
  for (let i = 0; i < 500; i++) {
    online = await onlineOf(handler, token);
    if (JSON.stringify(online) === JSON.stringify(names)) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.deepEqual(online, names);
}

storeTest(
  "GET /users/online needs a token, and lists in registration order who has an authenticated stream open",
  async (store) => {
    const handler = app(store);
    const ann = await register(handler, "ann");
    const bob = await register(handler, "bob");
    const cy = await register(handler, "Zoë");
    for (const token of [undefined, "ann-0000", `${ann}x`]) {
      const res = await call(handler, "GET", "/users/online", { token });
      assert.equal(res.status, 401);
      assert.deepEqual(res.json, { status: 401, message: "Unauthorized" });
    }
    assert.deepEqual(await onlineOf(handler, ann), []);
    const anonymous = await follow(handler);
    const cyStream = await follow(handler, cy);
    const annStream = await follow(handler, ann);
    await untilOnline(handler, bob, ["ann", "Zoë"]);
    assert.deepEqual(
      (await call(handler, "GET", "/users", { token: bob })).json.users,
      ["ann", "bob", "Zoë"],
    );
    await cyStream.close();
    await untilOnline(handler, bob, ["ann"]);
    await annStream.close();
    await untilOnline(handler, bob, []);
    await anonymous.close();
  },
);

storeTest(
  "a stream whose token does not authenticate is refused 401 and opens nothing, to HEAD as to GET",
  async (store) => {
    const handler = app(store);
    const ann = await register(handler, "ann");
    const at = (method: string, token: string) =>
      handler(
        new Request("http://service.test/events", {
          method,
          headers: { "x-messaging-token": utf8Header(token) },
        }),
      );
    for (const token of ["ann-0000", "nobody-1234", "no dash", `${ann}0`]) {
      const res = await at("GET", token);
      assert.equal(res.status, 401, token);
      assert.deepEqual(await res.json(), {
        status: 401,
        message: "Unauthorized",
      });
      const head = await at("HEAD", token);
      assert.equal(head.status, 401, `HEAD with ${token}`);
      await head.body?.cancel();
    }
    assert.equal((await at("HEAD", ann)).status, 200);
    const metrics = await call(handler, "GET", "/metrics");
    assert.match(metrics.text, /^lms_event_streams_open 0$/m);
  },
);

storeTest(
  "a user is online while any of its streams is open, and every reader hears each change once, without an id",
  async (store) => {
    const handler = app(store);
    const ann = await register(handler, "ann");
    const bob = await register(handler, "bob");
    const watcher = await follow(handler);
    const first = await follow(handler, ann);
    assert.deepEqual(await nextPresence(watcher), {
      name: "ann",
      online: true,
    });
    // A reader hears its own user come online too.
    assert.deepEqual(await nextPresence(first), { name: "ann", online: true });
    const second = await follow(handler, ann);
    await first.close();
    await call(handler, "POST", "/", {
      token: bob,
      body: '{"text":"still here?"}',
    });
    const message = await watcher.event();
    assert.equal(message.event, "message", "no presence event came first");
    assert.deepEqual(await onlineOf(handler, bob), ["ann"]);
    await second.close();
    assert.deepEqual(await nextPresence(watcher), {
      name: "ann",
      online: false,
    });
    await watcher.close();
  },
);

storeTest(
  "unregistering is told to every reader; the old streams stop counting, so the name's next owner starts offline",
  async (store) => {
    const handler = app(store);
    const ann = await register(handler, "ann");
    const bob = await register(handler, "bob");
    const watcher = await follow(handler);
    const old = await follow(handler, ann);
    assert.deepEqual(await nextPresence(watcher), {
      name: "ann",
      online: true,
    });
    assert.equal(
      (await call(handler, "DELETE", "/users", { token: ann })).status,
      200,
    );
    assert.deepEqual(await nextPresence(watcher), {
      name: "ann",
      registered: false,
    });
    // The reader of the old stream hears it too: its token is gone.
    assert.deepEqual(await nextPresence(old), {
      name: "ann",
      online: true,
    });
    assert.deepEqual(await nextPresence(old), {
      name: "ann",
      registered: false,
    });
    assert.deepEqual(await onlineOf(handler, bob), []);
    const annAgain = await register(handler, "ann");
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(await onlineOf(handler, bob), [], "starts offline");
    const fresh = await follow(handler, annAgain);
    await untilOnline(handler, bob, ["ann"]);
    // Closing a stream of the old owner takes nothing from the new one.
    await old.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(await onlineOf(handler, bob), ["ann"]);
    await fresh.close();
    await untilOnline(handler, bob, []);
    await watcher.close();
  },
);

storeTest(
  "a resumed stream replays messages, never presence",
  async (store) => {
    const handler = app(store);
    const ann = await register(handler, "ann");
    const bob = await register(handler, "bob");
    await call(handler, "POST", "/", { token: ann, body: '{"text":"one"}' });
    const online = await follow(handler, bob);
    await untilOnline(handler, ann, ["bob"]);
    await online.close();
    await untilOnline(handler, ann, []);
    await call(handler, "POST", "/", { token: ann, body: '{"text":"two"}' });
    const resumed = await follow(handler, undefined, { "last-event-id": "0" });
    const events: StreamEvent[] = await resumed.events(2);
    assert.deepEqual(events.map((e) => [e.event, e.id]), [
      ["message", "1"],
      ["message", "2"],
    ]);
    await resumed.close();
  },
);

storeTest(
  "streams of one user through two handlers over one store add up",
  async (store) => {
    const one = app(store);
    const two = app(store);
    const ann = await register(one, "ann");
    const a = await follow(one, ann);
    const b = await follow(two, ann);
    await untilOnline(one, ann, ["ann"]);
    await a.close();
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(await onlineOf(two, ann), ["ann"]);
    await b.close();
    await untilOnline(two, ann, []);
  },
);

storeTest(
  "a reader whose stream is cut as it goes live (what came meanwhile is past the buffer) is not left online",
  async (store) => {
    // Its catch-up, read before a message comes, is written after it came.
    const read = Promise.withResolvers<void>();
    const held = Promise.withResolvers<void>();
    const recentMessages = store.recentMessages.bind(store);
    store.recentMessages = async (...args) => {
      const recent = await recentMessages(...args);
      read.resolve();
      await held.promise;
      return recent;
    };
    const handler = createHandler({
      store,
      heartbeatMs: 60_000,
      maxStreamBufferBytes: 64,
    });
    const ann = await register(handler, "ann");
    const opening = handler(
      new Request("http://service.test/events", {
        headers: { "x-messaging-token": ann },
      }),
    );
    await read.promise;
    // Heard here after the stream's own listener, subscribed first, heard it.
    const heard = Promise.withResolvers<void>();
    const stop = store.subscribe((event) => {
      if (event.kind === "message") heard.resolve();
    });
    await store.addMessage(JSON.stringify({ text: "x".repeat(200) }));
    await heard.promise;
    stop();
    held.resolve();
    const res = await opening;
    // As a stream cut during its catch-up is: told to come back.
    assert.equal(res.status, 503);
    await res.body?.cancel();
    const bob = await register(handler, "bob");
    assert.deepEqual(await onlineOf(handler, bob), []);
  },
);

storeTest(
  "a user whose streams open and close many times a second reaches the readers at most once a second, its last state last",
  async (store) => {
    const handler = app(store);
    const ann = await register(handler, "ann");
    const bob = await register(handler, "bob");
    const watcher = await follow(handler);
    const started = performance.now();
    for (let i = 0; i < 20; i++) {
      const churn = await follow(handler, ann);
      await churn.close();
    }
    const elapsed = performance.now() - started;
    await untilOnline(handler, bob, []);
    // Read until nothing more comes for longer than an interval takes to end.
    const told: unknown[] = [];
    for (let i = 0; i < 100; i++) {
      const item = await watcher.next(PRESENCE_PACE_MS * 2.5).catch(() => null);
      if (item === null) break;
      if (item.type === "event" && item.event === "presence") {
        told.push(JSON.parse(item.data));
      }
    }
    assert.deepEqual(told.at(-1), { name: "ann", online: false });
    // 40 changes; one told at once, then at most one per interval begun.
    const most = 2 + Math.ceil(elapsed / PRESENCE_PACE_MS);
    assert.ok(told.length <= most, `${told.length} told, at most ${most}`);
    await watcher.close();
  },
);
