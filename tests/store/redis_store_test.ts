/**
 * The Redis store in one process against a real `redis-server` in trouble:
 * too slow, out of memory, emptied under it. The contract itself runs over
 * Redis in the service tests; several processes in the multiprocess suite.
 */
import assert from "node:assert/strict";
import { createHandler } from "../../src/program/app.ts";
import { RedisStore } from "../../src/store/redis/redis_store.ts";
import { call } from "../_support/call.ts";
import {
  type RedisServer,
  redisServerPath,
  startRedis,
} from "../_support/redis_server.ts";
import { itemAt } from "../_support/item_at.ts";

const ignore = redisServerPath() === undefined;

async function withRedis(
  fn: (redis: RedisServer, store: RedisStore, log: string[]) => Promise<void>,
  options: { commandTimeoutMs?: number; maxPendingCommands?: number } = {},
): Promise<void> {
  const redis = await startRedis();
  const log: string[] = [];
  const store = await RedisStore.connect({
    url: redis.url,
    onStatus: (message) => log.push(message),
    ...options,
  });
  try {
    await fn(redis, store, log);
  } finally {
    redis.resume();
    await store.close();
    await redis.kill();
  }
}

Deno.test({
  name:
    "past maxPendingCommands a request is 503 at once, and nothing more is sent to a stalled Redis",
  ignore,
  async fn() {
    await withRedis(async (redis, store) => {
      const handler = createHandler({ store });
      redis.pause();
      const waiting = [1, 2].map((i) =>
        call(handler, "POST", "/quote", { body: `Waiting ${i}.` })
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      const start = performance.now();
      const shed = await call(handler, "POST", "/quote", { body: "Shed." });
      assert.equal(shed.status, 503);
      assert.ok(
        performance.now() - start < 5000,
        "answered long before the 10 s command timeout",
      );
      redis.resume();
      for (const answer of await Promise.all(waiting)) {
        assert.equal(answer.status, 200);
      }
      const quote = await call(handler, "GET", "/quote");
      assert.match(quote.json, /^Waiting [12]\.$/);
    }, { commandTimeoutMs: 10_000, maxPendingCommands: 2 });
  },
});

Deno.test({
  name:
    "an error reply about Redis's state (out of memory) is 503 with one log line, and reads go on",
  ignore,
  async fn() {
    await withRedis(async (redis, store, log) => {
      const faults: unknown[] = [];
      const handler = createHandler({ store, logFault: (e) => faults.push(e) });
      await redis.cli("CONFIG", "SET", "maxmemory-policy", "noeviction");
      await redis.cli("CONFIG", "SET", "maxmemory", "1");
      const res = await call(handler, "POST", "/users", { body: "ann" });
      assert.equal(res.status, 503, res.text);
      assert.deepEqual(res.json, {
        status: 503,
        message: "Service Unavailable",
      });
      assert.deepEqual(faults, []);
      assert.equal(log.length, 1, log.join("\n"));
      assert.match(
        itemAt(log, 0),
        /^redis \(commands\): OOM command not allowed/,
      );
      assert.equal((await call(handler, "GET", "/quote")).status, 200);
      await redis.cli("CONFIG", "SET", "maxmemory", "0");
      assert.equal(
        (await call(handler, "POST", "/users", { body: "ann" })).status,
        200,
      );
    });
  },
});

Deno.test({
  name:
    "a Redis emptied under the service (FLUSHALL) drops every local copy and kept token within a second or two",
  ignore,
  async fn() {
    await withRedis(async (redis, store) => {
      const handler = createHandler({ store });
      const old = (await call(handler, "POST", "/users", { body: "ann" })).json
        .token;
      await call(handler, "POST", "/quote", { body: "Kept." });
      // Served from the copies now: the quote, the list, ann's token.
      assert.equal((await call(handler, "GET", "/quote")).json, "Kept.");
      assert.equal(
        (await call(handler, "GET", "/users", { token: old })).status,
        200,
      );
      assert.equal(await redis.cli("FLUSHALL"), "OK");
      let quote = "Kept.";
      for (let i = 0; i < 40 && quote === "Kept."; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        quote = (await call(handler, "GET", "/quote")).json;
      }
      assert.equal(quote, "Not set, yet !");
      const owner = (await call(handler, "POST", "/users", { body: "ann" }))
        .json.token;
      assert.equal(
        (await call(handler, "GET", "/users", { token: old })).status,
        401,
      );
      assert.deepEqual(
        (await call(handler, "GET", "/users", { token: owner })).json,
        { users: ["ann"] },
      );
    });
  },
});

/** How many bytes Redis has sent to all its clients so far. */
async function bytesSent(redis: RedisServer): Promise<number> {
  const stats = await redis.cli("INFO", "stats");
  return Number(/total_net_output_bytes:(\d+)/.exec(stats)![1]);
}

/** How many times Redis has run `command`, scripts' calls included. */
async function calls(redis: RedisServer, command: string): Promise<number> {
  const stats = await redis.cli("INFO", "commandstats");
  return Number(
    new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0,
  );
}

Deno.test({
  name:
    "a catch-up reads what it sends, not the history: up to date, it costs Redis a few bytes whatever --history holds",
  ignore,
  async fn() {
    await withRedis(async (redis) => {
      const history = 2000;
      const store = await RedisStore.connect({ url: redis.url, history });
      try {
        const text = "x".repeat(200);
        for (let i = 0; i < history; i += 200) {
          await Promise.all(
            Array.from(
              { length: 200 },
              () => store.addMessage(JSON.stringify({ text })),
            ),
          );
        }
        const { newestId } = await store.recentMessages(history);
        assert.equal(newestId, history);
        // What Redis sends for 20 catch-ups, less what one INFO costs.
        const cost = async (afterId: number) => {
          const idle = -(await bytesSent(redis)) + await bytesSent(redis);
          const before = await bytesSent(redis);
          for (let i = 0; i < 20; i++) {
            const recent = await store.recentMessages(afterId);
            assert.equal(recent.messages.length, newestId - afterId);
          }
          return (await bytesSent(redis)) - before - idle;
        };
        const reads = async () =>
          (await calls(redis, "lrange")) + (await calls(redis, "lindex"));
        const readsBefore = await reads();
        const upToDate = await cost(newestId);
        assert.equal(await reads(), readsBefore, "up to date: no list read");
        const threeBehind = await cost(newestId - 3);
        // The history is 2,000 entries of 200 bytes and more: 400 KB a read.
        assert.ok(upToDate < 20 * 100, `${upToDate} bytes`);
        assert.ok(threeBehind < 20 * (100 + 3 * 250), `${threeBehind} bytes`);
      } finally {
        await store.close();
      }
    });
  },
});

Deno.test({
  name:
    "a reader resuming past writes Redis lost (a restart from an older snapshot) is told how many it missed",
  ignore,
  async fn() {
    await withRedis(async (redis, store) => {
      for (const text of ["one", "two", "three"]) {
        await store.addMessage(JSON.stringify({ text }));
      }
      // What a restart from a snapshot taken after "one" leaves.
      assert.equal(
        await redis.cli("LPOP", "lms:history", "2"),
        '3 {"text":"three"}\n2 {"text":"two"}',
      );
      assert.equal(await redis.cli("SET", "lms:history:sequence", "1"), "OK");
      // Ids go on above the newest this process has seen.
      assert.equal(await store.addMessage(JSON.stringify({ text: "four" })), 4);
      for (
        const [after, missed, ids] of [
          [1, 2, [4]],
          [2, 1, [4]],
          [0, 2, [1, 4]],
          [3, 0, [4]],
          [4, 0, []],
        ] as const
      ) {
        const recent = await store.recentMessages(after);
        assert.deepEqual(
          { missed: recent.missed, ids: recent.messages.map((m) => m.id) },
          { missed, ids: [...ids] },
          `after ${after}`,
        );
      }
    });
  },
});
