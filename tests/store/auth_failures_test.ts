/** Failed authentications as every store backend counts them, and on Redis as every process shares them. */
import assert from "node:assert/strict";
import { sharedRedisServer, storeTest } from "../_support/call.ts";
import { redisServerPath } from "../_support/redis_server.ts";
import { RedisStore } from "../../src/store/redis/redis_store.ts";

const rate = { burst: 3, periodMs: 60_000 };

storeTest(
  "a client's failures spend its burst; then it waits about a period, and others do not",
  async (store) => {
    // As the authenticator does: a try already counted is not counted again.
    for (let i = 0; i < 3; i++) {
      const tried = await store.authWait("192.0.2.1", rate);
      assert.equal(tried.waitMs, 0, `before failure ${i}`);
      if (!tried.counted) await store.countAuthFailure("192.0.2.1", rate);
    }
    const { waitMs: wait } = await store.authWait("192.0.2.1", rate);
    assert.ok(wait > 59_000 && wait <= 60_000, `waits ${wait} ms`);
    assert.equal((await store.authWait("192.0.2.2", rate)).waitMs, 0);
    // A write's allowance is another bucket.
    await store.setQuote("Still free.", { client: "192.0.2.1", rate });
  },
);

storeTest(
  "a waiting client may try again once a period has passed",
  async (store) => {
    const fast = { burst: 1, periodMs: 300 };
    await store.countAuthFailure("c", fast);
    const { waitMs: wait } = await store.authWait("c", fast);
    assert.ok(wait > 0 && wait <= 300, `waits ${wait} ms`);
    await new Promise((resolve) => setTimeout(resolve, wait + 20));
    assert.equal((await store.authWait("c", fast)).waitMs, 0);
  },
);

Deno.test({
  name:
    "[redis] failures counted by two processes add up, and both refuse the client once it ran out",
  ignore: redisServerPath() === undefined,
  async fn() {
    const server = await sharedRedisServer();
    const prefix = `test:${crypto.randomUUID()}:`;
    const connect = () => RedisStore.connect({ url: server.url, prefix });
    const [a, b] = [await connect(), await connect()];
    try {
      const shared = { burst: 4, periodMs: 60_000 };
      // Two failures each: neither process alone has seen four.
      for (const store of [a, b, a, b]) {
        await store.countAuthFailure("198.51.100.9", shared);
      }
      for (const store of [a, b]) {
        let wait = 0;
        // The news travels by the change channel: bounded wait for it.
        for (let i = 0; i < 100 && wait === 0; i++) {
          wait = (await store.authWait("198.51.100.9", shared)).waitMs;
          if (wait === 0) await new Promise((r) => setTimeout(r, 20));
        }
        assert.ok(wait > 59_000, `each process refuses: waits ${wait} ms`);
        assert.equal((await store.authWait("198.51.100.10", shared)).waitMs, 0);
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  },
});

Deno.test({
  name:
    "[redis] tries made at once at two processes, by a client both saw fail, get through no more than its allowance left",
  ignore: redisServerPath() === undefined,
  async fn() {
    const server = await sharedRedisServer();
    const prefix = `test:${crypto.randomUUID()}:`;
    const connect = () => RedisStore.connect({ url: server.url, prefix });
    const [a, b] = [await connect(), await connect()];
    try {
      const rate = { burst: 6, periodMs: 60_000 };
      const client = "198.51.100.20";
      // One failure at each: both know the client, 4 tries are left.
      await a.countAuthFailure(client, rate);
      await b.countAuthFailure(client, rate);
      // 40 guesses at once, half at each, each a failure when let through.
      const through = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const store = i % 2 === 0 ? a : b;
          const tried = await store.authWait(client, rate);
          if (tried.waitMs > 0) return 0;
          if (!tried.counted) await store.countAuthFailure(client, rate);
          return 1;
        }),
      );
      const count = through.reduce((sum: number, n) => sum + n, 0);
      assert.equal(count, 4, `${count} guesses got through`);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  },
});

storeTest(
  "tries that authenticate are given back: only failures count, on a store that counts tries first too",
  async (store) => {
    const client = "192.0.2.30";
    const fail = async () => {
      const tried = await store.authWait(client, rate);
      assert.equal(tried.waitMs, 0);
      if (!tried.counted) await store.countAuthFailure(client, rate);
    };
    await fail();
    for (let i = 0; i < 20; i++) {
      const tried = await store.authWait(client, rate);
      assert.equal(tried.waitMs, 0, `right credential ${i}`);
      if (tried.counted) store.refundAuthTry(client, rate);
      // The refund travels to Redis on its own: let it land.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await fail();
    await fail();
    assert.ok((await store.authWait(client, rate)).waitMs > 0);
  },
);
