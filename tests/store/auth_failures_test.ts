/** Failed authentications as every store backend counts them, and on Redis as every process shares them. */
import assert from "node:assert/strict";
import { sharedRedisServer, storeTest } from "../_support/call.ts";
import { redisServerPath } from "../_support/redis_server.ts";
import { RedisStore } from "../../src/store/redis/redis_store.ts";
import type { AuthFailures, UserTokens } from "../../src/store/store.ts";
import type { RateLimit } from "../../src/store/token_buckets.ts";
import { createAuthenticator } from "../../src/auth/guesses.ts";

const rate = { burst: 3, periodMs: 60_000 };

/** Two Redis stores on one server and prefix, as two processes of one deployment. */
function redisPairTest(
  name: string,
  fn: (a: RedisStore, b: RedisStore) => Promise<void>,
): void {
  Deno.test({
    name: `[redis] ${name}`,
    ignore: redisServerPath() === undefined,
    async fn() {
      const server = await sharedRedisServer();
      const prefix = `test:${crypto.randomUUID()}:`;
      const connect = () => RedisStore.connect({ url: server.url, prefix });
      const [a, b] = [await connect(), await connect()];
      try {
        await fn(a, b);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    },
  });
}

storeTest(
  "a client's failures spend its burst; then it waits about a period, and others do not",
  async (store) => {
    for (let i = 0; i < 3; i++) {
      assert.equal(await wave(store, "192.0.2.1", rate, 1), 1, `failure ${i}`);
    }
    const { waitMs: wait } = await store.authWait("192.0.2.1", rate, null);
    assert.ok(wait > 59_000 && wait <= 60_000, `waits ${wait} ms`);
    assert.equal((await store.authWait("192.0.2.2", rate, null)).waitMs, 0);
    // A write's allowance is another bucket.
    await store.setQuote("Still free.", { client: "192.0.2.1", rate });
  },
);

storeTest(
  "a waiting client may try again once a period has passed",
  async (store) => {
    const fast = { burst: 1, periodMs: 300 };
    await store.countAuthFailure("c", fast);
    const { waitMs: wait } = await store.authWait("c", fast, null);
    assert.ok(wait > 0 && wait <= 300, `waits ${wait} ms`);
    await new Promise((resolve) => setTimeout(resolve, wait + 20));
    assert.equal((await store.authWait("c", fast, null)).waitMs, 0);
  },
);

redisPairTest(
  "failures counted by two processes add up, and both refuse the client once it ran out",
  async (a, b) => {
    const shared = { burst: 4, periodMs: 60_000 };
    // Two failures each: neither process alone has seen four.
    for (const store of [a, b, a, b]) {
      await store.countAuthFailure("198.51.100.9", shared);
    }
    for (const store of [a, b]) {
      let wait = 0;
      // The news travels by the change channel: bounded wait for it.
      for (let i = 0; i < 100 && wait === 0; i++) {
        wait = (await store.authWait("198.51.100.9", shared, null)).waitMs;
        if (wait === 0) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(wait > 59_000, `each process refuses: waits ${wait} ms`);
      assert.equal(
        (await store.authWait("198.51.100.10", shared, null)).waitMs,
        0,
      );
    }
  },
);

redisPairTest(
  "tries made at once at two processes, by a client both saw fail, get through no more than its allowance left",
  async (a, b) => {
    const rate = { burst: 6, periodMs: 60_000 };
    const client = "198.51.100.20";
    // One failure at each: both know the client, 4 tries are left.
    await a.countAuthFailure(client, rate);
    await b.countAuthFailure(client, rate);
    // 40 guesses at once, half at each.
    const [atA, atB] = await Promise.all([
      wave(a, client, rate, 20),
      wave(b, client, rate, 20),
    ]);
    const count = atA + atB;
    assert.equal(count, 4, `${count} guesses got through`);
  },
);

redisPairTest(
  "right credentials tried at once, by a client near its limit, spend nothing and are never refused",
  async (a, b) => {
    const rate = { burst: 4, periodMs: 60_000 };
    const client = "198.51.100.30";
    const digest = "a".repeat(64);
    await a.registerUser("ann", digest);
    // Three of four failures: both processes know the client.
    for (const store of [a, b, a]) await store.countAuthFailure(client, rate);
    const tries = await Promise.all(
      Array.from(
        { length: 50 },
        (_, i) =>
          (i % 2 ? b : a).authWait(client, rate, { name: "ann", digest }),
      ),
    );
    assert.deepEqual(
      tries.filter((t) => !(t.waitMs === 0 && t.verdict !== false)),
      [],
      "every right try goes through",
    );
    // The one failure left is still there, then none.
    assert.equal(await wave(a, client, rate, 1), 1);
    assert.equal(await wave(b, client, rate, 1), 0);
  },
);

/**
 * `count` wrong credentials checked at once at `store`, as requests reach
 * the authenticator: how many were judged (401) rather than refused (429).
 */
async function wave(
  store: UserTokens & AuthFailures,
  client: string,
  rate: RateLimit,
  count: number,
): Promise<number> {
  const auth = createAuthenticator({ store, rate, clientOf: () => client });
  const wrong = { name: "nobody", token: "0".repeat(40) };
  const answers = await Promise.allSettled(
    // Each started at once; a refusal thrown at once (memory) rejects.
    Array.from(
      { length: count },
      async () => await auth.check({ ...wrong }, client),
    ),
  );
  for (const answer of answers) {
    if (answer.status === "fulfilled") assert.equal(answer.value, null);
    else assert.equal(answer.reason.status, 429, String(answer.reason));
  }
  return answers.filter((a) => a.status === "fulfilled").length;
}

storeTest(
  "a wave of wrong guesses by a new client at one process is judged no more than its burst",
  async (store) => {
    const judged = await wave(store, "198.51.100.40", rate, 50);
    assert.equal(judged, rate.burst, `${judged} of 50 judged`);
  },
);

redisPairTest(
  "a client that ran out at one process gets one guess at another once a period passed, not a wave",
  async (a, b) => {
    const fast = { burst: 2, periodMs: 400 };
    const client = "198.51.100.41";
    assert.equal(await wave(a, client, fast, 2), 2);
    // Both processes refuse it now: the other heard it from Redis.
    let wait = 0;
    for (let i = 0; i < 100 && wait === 0; i++) {
      wait = (await b.authWait(client, fast, null)).waitMs;
      if (wait === 0) await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(wait > 0, "the other process heard");
    await new Promise((r) => setTimeout(r, wait + 30));
    const judged = await wave(b, client, fast, 50);
    assert.equal(judged, 1, `${judged} of 50 judged after one period`);
  },
);
