/** Failed authentications as every store backend counts them, and on Redis as every process shares them. */
import assert from "node:assert/strict";
import { sharedRedisServer, storeTest } from "../_support/call.ts";
import { redisServerPath } from "../_support/redis_server.ts";
import { RedisStore } from "../../src/store/redis/redis_store.ts";

const rate = { burst: 3, periodMs: 60_000 };

storeTest(
  "a client's failures spend its burst; then it waits about a period, and others do not",
  async (store) => {
    for (let i = 0; i < 3; i++) {
      assert.equal(store.authWait("192.0.2.1", rate), 0, `before failure ${i}`);
      await store.countAuthFailure("192.0.2.1", rate);
    }
    const wait = store.authWait("192.0.2.1", rate);
    assert.ok(wait > 59_000 && wait <= 60_000, `waits ${wait} ms`);
    assert.equal(store.authWait("192.0.2.2", rate), 0);
    // A write's allowance is another bucket.
    await store.setQuote("Still free.", { client: "192.0.2.1", rate });
  },
);

storeTest(
  "a waiting client may try again once a period has passed",
  async (store) => {
    const fast = { burst: 1, periodMs: 300 };
    await store.countAuthFailure("c", fast);
    const wait = store.authWait("c", fast);
    assert.ok(wait > 0 && wait <= 300, `waits ${wait} ms`);
    await new Promise((resolve) => setTimeout(resolve, wait + 20));
    assert.equal(store.authWait("c", fast), 0);
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
          wait = store.authWait("198.51.100.9", shared);
          if (wait === 0) await new Promise((r) => setTimeout(r, 20));
        }
        assert.ok(wait > 59_000, `each process refuses: waits ${wait} ms`);
        assert.equal(store.authWait("198.51.100.10", shared), 0);
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  },
});
