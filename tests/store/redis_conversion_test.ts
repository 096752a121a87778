/**
 * Users registered by 0.2.0 keep authenticating after an upgrade, and the
 * upgraded store keeps none of their tokens: the records 0.2.0 wrote (its
 * key layout: `lms:users` name → token in clear, `lms:users:order`,
 * `lms:users:touched`) are converted as a store connects.
 */
import assert from "node:assert/strict";
import { RedisStore } from "../../src/store/redis/redis_store.ts";
import { createMessagingService } from "../../src/services/messaging.ts";
import { tokenDigest } from "../../src/identity/token_digest.ts";
import { call, sharedRedisServer } from "../_support/call.ts";
import { redisServerPath } from "../_support/redis_server.ts";

const ignore = redisServerPath() === undefined;

Deno.test({
  name:
    "users written by 0.2.0 authenticate after the upgrade, their tokens turned into digests and their looks recorded",
  ignore,
  async fn() {
    const server = await sharedRedisServer();
    const prefix = `v020:${crypto.randomUUID()}:`;
    // As 0.2.0's register script leaves them, for 300 users.
    const old = new Map<string, string>();
    for (let i = 0; i < 300; i++) {
      const name = i === 0 ? "admin" : `user${i}`;
      old.set(name, crypto.getRandomValues(new Uint8Array(20)).toHex());
    }
    const names = [...old.keys()];
    await server.cli("HSET", `${prefix}users`, ...[...old].flat());
    await server.cli(
      "ZADD",
      `${prefix}users:order`,
      ...names.flatMap((name, i) => [String(i + 1), name]),
    );
    await server.cli("SET", `${prefix}users:sequence`, String(names.length));
    const store = await RedisStore.connect({ url: server.url, prefix });
    try {
      const dump = await server.cli("HGETALL", `${prefix}users`);
      for (const token of old.values()) assert.ok(!dump.includes(token));
      const svc = createMessagingService({ store });
      for (const [name, token] of old) {
        assert.equal(await store.tokenOf(name), tokenDigest(token));
        const res = await call(svc, "GET", "/users", {
          token: `${name}-${token}`,
        });
        assert.equal(res.status, 200, name);
      }
      // Their looks are known: a look-alike of an old name is taken.
      const alike = await call(svc, "POST", "/users", { body: "\u0430dmin" });
      assert.equal(alike.status, 400);
      // A second process connecting finds nothing left to convert.
      const again = await RedisStore.connect({ url: server.url, prefix });
      await again.close();
      assert.equal(
        await store.tokenOf("admin"),
        tokenDigest(old.get("admin")!),
      );
      // Once converted, the data set is not scanned again at each connect:
      // a record only a 0.2.0 process could write now is left as it is.
      const late = "c".repeat(40);
      await server.cli("HSET", `${prefix}users`, "late", late);
      const third = await RedisStore.connect({ url: server.url, prefix });
      await third.close();
      assert.equal(
        (await server.cli("HGET", `${prefix}users`, "late")).trim(),
        late,
      );
    } finally {
      await store.close();
    }
  },
});
