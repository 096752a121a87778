/**
 * "Operating it", as an operator sees it: the real program, over HTTP.
 * Readiness follows Redis, the rate limit's Retry-After is honest and one
 * allowance is shared by every process on a Redis, and the JSON log is
 * JSON, line by line, with no token and no message in it.
 */
import assert from "node:assert/strict";
import { utf8Header } from "../_support/call.ts";
import { eventually, withCluster } from "../_support/cluster.ts";
import { startServer } from "../_support/program.ts";
import { redisServerPath, startRedis } from "../_support/redis_server.ts";

const noRedis = redisServerPath() === undefined;

async function status(url: string, init: RequestInit = {}) {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(5000) });
  await res.body?.cancel();
  return res.status;
}

Deno.test({
  name:
    "/readyz is 503 once Redis is killed and 200 again when it returns, while /healthz stays 200; the Redis lines are JSON",
  ignore: noRedis,
  async fn() {
    await withCluster(1, ["--log-format=json"], async ([server], redis) => {
      assert.equal(await status(`${server.url}readyz`), 200);
      await redis.kill();
      await eventually(async () => await status(`${server.url}readyz`) === 503);
      assert.equal(await status(`${server.url}healthz`), 200);
      await redis.restart();
      await eventually(async () => await status(`${server.url}readyz`) === 200);
      await eventually(() =>
        Promise.resolve(server.stderr().includes("connection restored"))
      );
      const lines = server.stderr().trimEnd().split("\n");
      const parsed = lines.map((line) => JSON.parse(line));
      const said = (level: string, pattern: RegExp) =>
        parsed.some((entry) =>
          entry.level === level && pattern.test(entry.message)
        );
      assert.ok(said("error", /connection lost/), server.stderr());
      assert.ok(said("info", /connection restored/), server.stderr());
      for (const entry of parsed) {
        assert.equal(typeof entry.time, "string");
        assert.ok(!Number.isNaN(Date.parse(entry.time)));
      }
    });
  },
});

Deno.test({
  name:
    "two processes on one Redis share one allowance: what one process allows, both allow together",
  ignore: noRedis,
  async fn() {
    await withCluster(2, ["--rate-limit=3/600"], async ([a, b]) => {
      const write = (server: { url: string }) =>
        status(`${server.url}quote`, { method: "POST", body: "Shared." });
      assert.deepEqual(
        [await write(a), await write(b), await write(a)],
        [200, 200, 200],
      );
      assert.deepEqual([await write(b), await write(a)], [429, 429]);
      assert.equal(await status(`${b.url}quote`), 200, "reads still pass");
    });
  },
});

Deno.test("the Retry-After of a 429 is honest: a write made after waiting it succeeds", async () => {
  const server = await startServer(["--quiet", "--rate-limit=1/1"]);
  try {
    const write = () =>
      fetch(`${server.url}quote`, { method: "POST", body: "Again!" });
    assert.equal((await write()).status, 200);
    const refused = await write();
    assert.equal(refused.status, 429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    assert.equal(retryAfter, 1);
    assert.equal((await refused.json()).errors[0].name, "rate");
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000));
    assert.equal((await write()).status, 200);
  } finally {
    assert.equal(await server.stop(), 0, server.stderr());
  }
});

Deno.test("--log-format=json: the banner is still the first line scripts read; every log line is one JSON object with the request's fields, and holds no token and no message text", async () => {
  const server = await startServer(["--log-format=json"]);
  let token = "";
  try {
    assert.match(
      server.banner,
      /^Listening on http:\/\/\S+:\d+\/ \(services: messaging, quote\)$/,
    );
    const register = await fetch(`${server.url}users`, {
      method: "POST",
      body: "Zoë",
    });
    ({ token } = await register.json());
    const headers = { "x-messaging-token": utf8Header(token) };
    await (await fetch(server.url, {
      method: "POST",
      headers,
      body: JSON.stringify({ text: "a secret plan" }),
    })).body?.cancel();
    await (await fetch(`${server.url}users`, { headers })).body?.cancel();
    await (await fetch(`${server.url}?token=${token}`)).body?.cancel();
    await (await fetch(`${server.url}missing`)).body?.cancel();
  } finally {
    assert.equal(await server.stop(), 0, server.stderr());
  }
  const log = server.stderr();
  assert.ok(!log.includes(token.slice(token.indexOf("-") + 1)), "no token");
  assert.ok(!log.includes("secret plan"), "no message text");
  const entries = log.trimEnd().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(
    entries.map((e) => `${e.method} ${e.route} ${e.status}`),
    [
      "POST /users 200",
      "POST / 200",
      "GET /users 200",
      "GET / 200",
      "GET /missing 404",
    ],
  );
  for (const entry of entries) {
    assert.deepEqual(Object.keys(entry), [
      "time",
      "method",
      "route",
      "status",
      "ms",
      "client",
    ]);
    assert.ok(!Number.isNaN(Date.parse(entry.time)));
    assert.equal(typeof entry.ms, "number");
    assert.equal(entry.client, "127.0.0.1");
  }
});

Deno.test({
  name:
    "deno serve --parallel takes the operating settings from LMS_* variables: one allowance over every worker, JSON logs, the proxy's address",
  ignore: noRedis,
  async fn() {
    const redis = await startRedis();
    const server = await startServer([], {
      LMS_STORE: redis.url,
      LMS_RATE_LIMIT: "2/600",
      LMS_TRUST_PROXY: "1",
      LMS_LOG_FORMAT: "json",
    }, { workers: 2 });
    try {
      // Fresh connections spread over the workers.
      const write = (client: string) =>
        status(`${server.url}quote`, {
          method: "POST",
          body: "Parallel.",
          headers: { connection: "close", "x-forwarded-for": client },
        });
      assert.deepEqual(
        [
          await write("192.0.2.1"),
          await write("192.0.2.1"),
          await write("192.0.2.1"),
        ],
        [200, 200, 429],
      );
      assert.equal(
        await write("192.0.2.2"),
        200,
        "another client, its own bucket",
      );
    } finally {
      assert.equal(await server.stop(), 0, server.stderr());
      await redis.kill();
    }
    const requests = server.stderr().split("\n").filter((line) =>
      line.includes('"method"')
    ).map((line) => JSON.parse(line.replace(/^\[serve-worker-\d+ *\] /, "")));
    assert.deepEqual(
      requests.filter((r) => r.route === "/quote").map((r) => r.client).sort(),
      ["192.0.2.1", "192.0.2.1", "192.0.2.1", "192.0.2.2"],
    );
  },
});

Deno.test("--log-format=json, with and without --trust-proxy: WebSockets opened and closed are logged with their client, and the server serves on", async () => {
  for (const flags of [[], ["--trust-proxy"]]) {
    const server = await startServer(["--log-format=json", ...flags]);
    try {
      for (let i = 0; i < 3; i++) {
        const socket = new WebSocket(
          `${server.url.replace("http", "ws")}events`,
        );
        const opened = Promise.withResolvers<void>();
        socket.onopen = () => opened.resolve();
        socket.onerror = () => opened.reject(new Error("the socket failed"));
        await opened.promise;
        const closed = Promise.withResolvers<void>();
        socket.onclose = () => closed.resolve();
        socket.close();
        await closed.promise;
      }
      assert.equal(await status(`${server.url}healthz`), 200);
    } finally {
      assert.equal(await server.stop(), 0, server.stderr());
    }
    const upgrades = server.stderr().trimEnd().split("\n")
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.route === "/events");
    assert.deepEqual(
      upgrades.map((e) => `${e.method} ${e.status} ${e.client}`),
      Array(3).fill("GET 101 127.0.0.1"),
      JSON.stringify(flags),
    );
  }
});
