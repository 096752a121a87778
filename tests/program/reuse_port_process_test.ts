/**
 * `--reuse-port`: several program processes share one port, the kernel
 * spreads connections among them, and they share state through Redis; the
 * memory store refuses the flag, and without it a second process cannot
 * take a port in use.
 */
import assert from "node:assert/strict";
import { freePort, runProgram, startServer } from "../_support/program.ts";
import { redisServerPath, startRedis } from "../_support/redis_server.ts";

/** `count` processes started with `--reuse-port` on one free port, sharing a new Redis. */
async function onOnePort(count: number, extra: string[] = []) {
  const redis = await startRedis();
  const port = freePort();
  const args = [
    `--port=${port}`,
    "--hostname=127.0.0.1",
    "--reuse-port",
    `--store=${redis.url}`,
    ...extra,
  ];
  const servers = [];
  for (let i = 0; i < count; i++) servers.push(await startServer(args));
  return { port, redis, servers };
}

Deno.test("--reuse-port with the memory store is a usage error that says why", async () => {
  const { code, stderr } = await runProgram(["--reuse-port", "--port=0"]);
  assert.equal(code, 2);
  assert.match(stderr, /--reuse-port needs a shared store/);
});

Deno.test({
  name:
    "two processes started with --reuse-port on one port both answer, new connections spread between them, and they share one Redis",
  ignore: redisServerPath() === undefined,
  async fn() {
    const { port, redis, servers } = await onOnePort(2);
    const [a, b] = [servers[0]!, servers[1]!];
    try {
      const base = `http://127.0.0.1:${port}/`;
      const reg = await fetch(`${base}users`, { method: "POST", body: "ann" });
      const { token } = await reg.json();
      for (let i = 0; i < 60; i++) {
        // A connection of its own each time, so the kernel picks anew.
        using client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
        const res = await fetch(`${base}users`, {
          headers: { "x-messaging-token": token },
          client,
        });
        assert.equal(res.status, 200, "either process knows ann");
        await res.body?.cancel();
      }
      // The request log tells which process answered; it is written
      // whole by the time a process has stopped.
      await Promise.all([a.stop(), b.stop()]);
      const answered = [a, b].map((server) =>
        server.stderr().split("\n").filter((line) => line.includes("/users"))
          .length
      );
      assert.equal(answered[0]! + answered[1]!, 61, `answered ${answered}`);
      assert.ok(
        answered.every((n) => n >= 5),
        `both processes took connections: ${answered}`,
      );
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await redis.kill();
    }
  },
});

Deno.test({
  name: "without --reuse-port a second process cannot take a port in use",
  ignore: redisServerPath() === undefined,
  async fn() {
    const redis = await startRedis();
    const port = freePort();
    const args = [`--port=${port}`, "--hostname=127.0.0.1"];
    const a = await startServer([...args, `--store=${redis.url}`]);
    try {
      const second = await runProgram([...args, `--store=${redis.url}`]);
      assert.notEqual(second.code, 0);
      assert.match(second.stderr, /in use/i);
    } finally {
      await a.stop();
      await redis.kill();
    }
  },
});

Deno.test({
  name:
    "processes sharing a port each refuse past their --max-streams with Retry-After: 1, and a retry finds the one with room",
  ignore: redisServerPath() === undefined,
  async fn() {
    const { port, redis, servers } = await onOnePort(2, ["--max-streams=1"]);
    const clients: Deno.HttpClient[] = [];
    const open: Response[] = [];
    const refusals: Response[] = [];
    try {
      // A connection of its own each time, so the kernel picks anew.
      const follow = async () => {
        const client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
        clients.push(client);
        const res = await fetch(`http://127.0.0.1:${port}/events`, { client });
        if (res.status === 200) open.push(res);
        else refusals.push(res);
      };
      for (let i = 0; i < 50 && open.length < 2; i++) await follow();
      assert.equal(open.length, 2, "each process took one reader");
      await follow();
      assert.ok(refusals.length > 0);
      for (const refused of refusals) {
        assert.equal(refused.status, 503);
        assert.equal(refused.headers.get("retry-after"), "1");
        assert.equal(refused.headers.get("connection"), "close");
        assert.equal((await refused.json()).errors[0].name, "events");
      }
    } finally {
      await Promise.all(open.map((res) => res.body?.cancel()));
      for (const client of clients) client.close();
      await Promise.all(servers.map((server) => server.stop()));
      await redis.kill();
    }
  },
});
