/**
 * Readiness against a real Redis that answers but refuses every write
 * (`maxmemory` with `noeviction`), and the log of a fault that repeats.
 */
import assert from "node:assert/strict";
import { startServer } from "../_support/program.ts";
import { redisServerPath, startRedis } from "../_support/redis_server.ts";
import { register } from "../_support/over_http.ts";
import { utf8Header } from "../_support/call.ts";

const ignore = redisServerPath() === undefined;

Deno.test({
  name:
    "a Redis out of memory is not ready, with the reason; its refusals are logged once, not once per write; ready again once it takes writes",
  ignore,
  async fn() {
    const redis = await startRedis();
    const server = await startServer([
      `--store=${redis.url}`,
      "--hostname=127.0.0.1",
    ]);
    try {
      const token = await register(server.url, "ann");
      const readyz = async () => {
        const res = await fetch(`${server.url}readyz`);
        return { status: res.status, json: await res.json() };
      };
      assert.deepEqual(await readyz(), {
        status: 200,
        json: { status: "ready" },
      });
      await redis.cli("CONFIG", "SET", "maxmemory-policy", "noeviction");
      await redis.cli("CONFIG", "SET", "maxmemory", "1");
      const before = server.stderr().split("\n").length;
      for (let i = 0; i < 40; i++) {
        const res = await fetch(server.url, {
          method: "POST",
          headers: { "x-messaging-token": utf8Header(token) },
          body: JSON.stringify({ text: `m${i}` }),
        });
        assert.equal(res.status, 503);
        await res.body?.cancel();
      }
      const notReady = await readyz();
      assert.equal(notReady.status, 503);
      assert.equal(notReady.json.status, 503);
      assert.equal(notReady.json.message, "Service Unavailable");
      assert.match(notReady.json.reason, /out of memory/);
      const logged = server.stderr().split("\n").slice(before - 1)
        .filter((line) => line.includes("OOM"));
      assert.equal(logged.length, 1, logged.join("\n"));
      await redis.cli("CONFIG", "SET", "maxmemory", "0");
      assert.deepEqual(await readyz(), {
        status: 200,
        json: { status: "ready" },
      });
      const res = await fetch(server.url, {
        method: "POST",
        headers: { "x-messaging-token": utf8Header(token) },
        body: JSON.stringify({ text: "after" }),
      });
      assert.equal(res.status, 200);
      await res.body?.cancel();
    } finally {
      await server.stop();
      await redis.kill();
    }
  },
});
