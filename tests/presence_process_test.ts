/**
 * Presence and forgetting with the real program: processes sharing one
 * real `redis-server`, killed (-9), stopped, frozen and thawed while they
 * hold readers; and the memory store in one process.
 */

import assert from "node:assert/strict";
import { register } from "./_support/over_http.ts";
import { utf8Header } from "./_support/call.ts";
import { type EventReader, readEvents } from "./_support/event_reader.ts";
import { type RunningServer, startServer } from "./_support/program.ts";
import { redisServerPath } from "./_support/redis_server.ts";
import { withCluster } from "./_support/cluster.ts";

const ignore = redisServerPath() === undefined;

/** How long a request may go unanswered before the test fails. */
const ANSWER_MS = 10_000;

/** `GET /events`, as `token`'s user when given; fails unanswered after {@linkcode ANSWER_MS}. */
async function follow(url: string, token?: string): Promise<EventReader> {
  // Only until the answer begins: an abort later would end the stream.
  const abort = new AbortController();
  const timer = setTimeout(
    () => abort.abort(new Error(`GET ${url}events: no answer in time`)),
    ANSWER_MS,
  );
  try {
    const res = await fetch(`${url}events`, {
      headers: token === undefined
        ? {}
        : { "x-messaging-token": utf8Header(token) },
      signal: abort.signal,
    });
    assert.equal(res.status, 200);
    return readEvents(res.body!);
  } finally {
    clearTimeout(timer);
  }
}

/** The next presence event's data (messages skipped), waiting up to `timeoutMs`. */
async function nextPresence(
  events: EventReader,
  timeoutMs = 10_000,
): Promise<unknown> {
  const deadline = Date.now() + timeoutMs;
  for (let i = 0; i < 1000; i++) {
    const event = await events.event(Math.max(1, deadline - Date.now()));
    if (event.event === "presence") return JSON.parse(event.data);
  }
  throw new Error("no presence event");
}

async function online(url: string, token: string): Promise<string[]> {
  const res = await fetch(`${url}users/online`, {
    headers: { "x-messaging-token": utf8Header(token) },
    signal: AbortSignal.timeout(ANSWER_MS),
  });
  assert.equal(res.status, 200);
  return (await res.json()).online;
}

async function users(url: string, token: string): Promise<Response> {
  return await fetch(`${url}users`, {
    headers: { "x-messaging-token": utf8Header(token) },
    signal: AbortSignal.timeout(ANSWER_MS),
  });
}

const HEARTBEAT_MS = 1000;

/** What {@linkcode withAnnOnline} gives its test. */
interface AnnOnline {
  /** The process "ann" follows through. */
  a: RunningServer;
  /** The other process, where "bob" watches. */
  b: RunningServer;
  bob: string;
  watcher: EventReader;
  kill: (server: RunningServer) => void;
}

/**
 * Two programs on one Redis with `args`: "ann" follows through the first,
 * and an anonymous reader of the second has heard her come online.
 */
async function withAnnOnline(
  args: string[],
  fn: (cluster: AnnOnline) => Promise<void>,
): Promise<void> {
  await withCluster(2, args, async ([a, b], _redis, _start, kill) => {
    const ann = await register(a.url, "ann");
    const bob = await register(b.url, "bob");
    const watcher = await follow(b.url);
    const annStream = await follow(a.url, ann);
    let failure: { error: unknown } | undefined;
    try {
      assert.deepEqual(await nextPresence(watcher), {
        name: "ann",
        online: true,
      });
      await fn({ a, b, bob, watcher, kill });
    } catch (error) {
      failure = { error };
    }
    // Both readers are closed (each fails after 5 s); the first failure is told.
    const closing = [annStream.close(), watcher.close()];
    for (const closed of await Promise.allSettled(closing)) {
      if (closed.status === "rejected") failure ??= { error: closed.reason };
    }
    if (failure) throw failure.error;
  });
}

Deno.test({
  name:
    "kill -9 of the process holding a user's stream takes the user offline everywhere within 3 × --heartbeat-ms",
  ignore,
  async fn() {
    const args = [`--heartbeat-ms=${HEARTBEAT_MS}`];
    await withAnnOnline(args, async ({ a, b, bob, watcher, kill }) => {
      assert.deepEqual(await online(b.url, bob), ["ann"]);
      const killed = performance.now();
      kill(a);
      assert.deepEqual(await nextPresence(watcher), {
        name: "ann",
        online: false,
      });
      const tookMs = performance.now() - killed;
      console.log(`offline ${Math.round(tookMs)} ms after kill -9`);
      assert.ok(tookMs <= 3 * HEARTBEAT_MS, `took ${tookMs} ms`);
      assert.deepEqual(await online(b.url, bob), []);
    });
  },
});

Deno.test({
  name:
    "a process frozen past its record's expiry takes its users offline; thawed, it brings them back",
  ignore,
  async fn() {
    const args = [`--heartbeat-ms=${HEARTBEAT_MS}`];
    await withAnnOnline(args, async ({ a, b, bob, watcher }) => {
      a.process.kill("SIGSTOP");
      try {
        assert.deepEqual(await nextPresence(watcher), {
          name: "ann",
          online: false,
        });
      } finally {
        a.process.kill("SIGCONT");
      }
      // Its next beat finds its record gone, and it says again what it holds.
      assert.deepEqual(await nextPresence(watcher), {
        name: "ann",
        online: true,
      });
      assert.deepEqual(await online(b.url, bob), ["ann"]);
    });
  },
});

Deno.test({
  name:
    "a process stopped by SIGTERM takes its users offline at once, not at its record's expiry",
  ignore,
  async fn() {
    // A heartbeat so long that only the stop itself can explain it.
    await withAnnOnline(["--heartbeat-ms=60000"], async ({ a, watcher }) => {
      const stopped = a.stop("SIGTERM");
      assert.deepEqual(await nextPresence(watcher, 10_000), {
        name: "ann",
        online: false,
      });
      assert.equal(await stopped, 0);
    });
  },
});

Deno.test({
  name:
    "--forget-users-after across two processes: idle users are forgotten everywhere, active and online ones kept",
  ignore,
  async fn() {
    const args = ["--forget-users-after=1", `--heartbeat-ms=${HEARTBEAT_MS}`];
    await withCluster(2, args, async ([a, b]) => {
      const idle = await register(a.url, "idle");
      const busy = await register(a.url, "busy");
      const here = await register(a.url, "here");
      const watcher = await follow(b.url);
      const hereStream = await follow(a.url, here);
      assert.deepEqual(await nextPresence(watcher), {
        name: "here",
        online: true,
      });
      // "busy" makes a request through the other process every 300 ms
      // until the next presence event, so it is never idle for a second.
      const busyUntilPresence = async () => {
        for (let i = 0; i < 20; i++) {
          assert.equal((await users(b.url, busy)).status, 200);
          const event = await nextPresence(watcher, 300).catch(() => undefined);
          if (event !== undefined) return event;
        }
      };
      assert.deepEqual(await busyUntilPresence(), {
        name: "idle",
        registered: false,
      });
      assert.equal((await users(a.url, idle)).status, 401);
      assert.equal((await users(b.url, busy)).status, 200);
      assert.deepEqual(await online(b.url, busy), ["here"]);
      // Offline, "here" is forgotten like any idle user.
      await hereStream.close();
      assert.deepEqual(await busyUntilPresence(), {
        name: "here",
        online: false,
      });
      assert.deepEqual(await busyUntilPresence(), {
        name: "here",
        registered: false,
      });
      assert.equal((await users(b.url, busy)).status, 200);
      // The names are free again, through either process.
      await register(b.url, "idle");
      await register(a.url, "here");
      await watcher.close();
    });
  },
});

Deno.test("--forget-users-after on the memory store: an idle user is forgotten and its name is free", async () => {
  const server = await startServer(["--quiet", "--forget-users-after=1"]);
  try {
    const token = await register(server.url, "ghost");
    const watcher = await follow(server.url);
    assert.deepEqual(await nextPresence(watcher, 5000), {
      name: "ghost",
      registered: false,
    });
    assert.equal((await users(server.url, token)).status, 401);
    await register(server.url, "ghost");
    await watcher.close();
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

Deno.test({
  name:
    "DELETE /users through one process ends the user's streams in the other, within a second",
  ignore,
  async fn() {
    await withCluster(2, [], async ([a, b]) => {
      const ann = await register(a.url, "ann");
      const annStream = await follow(a.url, ann);
      const bob = await register(b.url, "bob");
      assert.deepEqual(await online(b.url, bob), ["ann"]);
      const started = performance.now();
      const gone = await fetch(`${b.url}users`, {
        method: "DELETE",
        headers: { "x-messaging-token": utf8Header(ann) },
      });
      assert.equal(gone.status, 200);
      await gone.body?.cancel();
      const presence: unknown[] = [];
      for (let i = 0; i < 100; i++) {
        const item = await annStream.next(1000);
        if (item === null) break;
        if (item.type === "event" && item.event === "presence") {
          presence.push(JSON.parse(item.data));
        }
      }
      assert.ok(performance.now() - started < 1000);
      assert.deepEqual(presence.at(-1), { name: "ann", registered: false });
      await annStream.close();
    });
  },
});
