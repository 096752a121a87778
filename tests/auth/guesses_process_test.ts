/**
 * Guessing is limited, on the real program over sockets: on by default,
 * `--auth-failures=0` turns it off, and on Redis the count is shared by
 * every process, for requests, event streams and WebSocket token frames,
 * while a client at another address authenticates as before.
 */
import assert from "node:assert/strict";
import { redisServerPath } from "../_support/redis_server.ts";
import { startServer } from "../_support/program.ts";
import { withCluster } from "../_support/cluster.ts";
import { openSocket } from "../_support/socket_reader.ts";

async function register(base: string, name: string): Promise<string> {
  const res = await fetch(`${base}users`, { method: "POST", body: name });
  return (await res.json()).token;
}

async function statusOf(
  base: string,
  token: string,
  client?: Deno.HttpClient,
): Promise<{ status: number; retryAfter: string | null }> {
  const res = await fetch(`${base}users`, {
    headers: { "x-messaging-token": token },
    client,
  });
  await res.body?.cancel();
  return { status: res.status, retryAfter: res.headers.get("retry-after") };
}

Deno.test("the program limits guessing by default, 100 at once, and --auth-failures=0 does not", async () => {
  for (
    const [args, limited] of [[[], true], [
      ["--auth-failures=0"],
      false,
    ]] as const
  ) {
    const server = await startServer(["--quiet", ...args]);
    try {
      // One more try comes back each 0.1 s, so a slow run earns a few more.
      const start = performance.now();
      let failures = 0;
      let next = await statusOf(server.url, "eve-00");
      for (; next.status === 401 && failures < 400; failures++) {
        next = await statusOf(server.url, "eve-00");
      }
      const refilled = Math.ceil((performance.now() - start) / 100);
      if (limited) {
        assert.equal(next.status, 429, `after ${failures} failures`);
        assert.equal(next.retryAfter, "1");
        assert.ok(
          failures >= 100 && failures <= 100 + refilled,
          `429 after ${failures} failures in ${refilled / 10} s`,
        );
      } else {
        assert.equal(next.status, 401, args.join(" "));
        assert.equal(failures, 400);
      }
    } finally {
      await server.stop();
    }
  }
});

Deno.test({
  name:
    "on Redis two processes share one count: failures at both add up, then both refuse that client on every authenticated way in",
  ignore: redisServerPath() === undefined,
  async fn() {
    await withCluster(2, ["--auth-failures=4/60"], async ([a, b]) => {
      const token = await register(a.url, "ann");
      for (const server of [a, b, a, b]) {
        assert.equal((await statusOf(server.url, "ann-00")).status, 401);
      }
      for (const server of [a, b]) {
        let answer = await statusOf(server.url, token);
        // The other process hears by the change channel: bounded wait.
        for (let i = 0; i < 50 && answer.status !== 429; i++) {
          await new Promise((r) => setTimeout(r, 20));
          answer = await statusOf(server.url, token);
        }
        assert.equal(answer.status, 429, `${server.url}: the right token too`);
        assert.equal(answer.retryAfter, "60");
        const events = await fetch(`${server.url}events`, {
          headers: { "x-messaging-token": token },
        });
        await events.body?.cancel();
        assert.equal(events.status, 429, "an event stream with the header");
        const socket = await openSocket(`${server.url}events`);
        socket.socket.send(JSON.stringify({ token }));
        assert.equal(await socket.closed(), 1013, "a WebSocket's token frame");
        assert.equal(
          socket.reason,
          "too many failed authentications from this client",
        );
      }
      // Another address authenticates as before, at either process.
      using elsewhere = Deno.createHttpClient({ localAddress: "127.0.0.2" });
      for (const server of [a, b]) {
        assert.equal(
          (await statusOf(server.url, token, elsewhere)).status,
          200,
        );
      }
    });
  },
});
