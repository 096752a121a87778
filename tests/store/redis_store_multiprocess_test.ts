/**
 * The Redis store as users run it: several real processes sharing one
 * `redis-server`, Redis dying and coming back, and `deno serve --parallel`.
 * The contract itself runs over Redis in the other test files.
 */

import assert from "node:assert/strict";
import { CONTENT_TYPE, utf8Header } from "../_support/call.ts";
import { readEvents } from "../_support/event_reader.ts";
import { redisServerPath, startRedis } from "../_support/redis_server.ts";
import {
  freePort,
  type RunningServer,
  runProgram,
  startServer,
} from "../_support/program.ts";
import { eventually, withCluster } from "../_support/cluster.ts";
import { itemAt } from "../_support/item_at.ts";

const missing = redisServerPath() === undefined;

/** Opens `GET /events` on `url`, resuming after `lastId` when given. */
async function openEvents(url: string, lastId?: string) {
  const res = await fetch(`${url}events`, {
    headers: lastId === undefined ? {} : { "last-event-id": lastId },
  });
  assert.equal(res.status, 200);
  return readEvents(res.body!);
}

/** A fetch that cannot hang: a request still unanswered after 5 s fails the test. */
async function get(url: string, init: RequestInit = {}) {
  const res = await fetch(url, {
    ...init,
    signal: AbortSignal.timeout(5_000),
  });
  assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
  return { status: res.status, json: await res.json() };
}

function post(url: string, body: string, token?: string) {
  const headers: Record<string, string> = token === undefined
    ? {}
    : { "x-messaging-token": utf8Header(token) };
  return get(url, { method: "POST", body, headers });
}

Deno.test({
  name: "two processes on one Redis are one service",
  ignore: missing,
  async fn() {
    await withCluster(2, [], async ([a, b]) => {
      const { json: { token } } = await post(`${a.url}users`, "Zoë");
      assert.match(token, /^Zoë-[0-9a-f]{40}$/);

      // Registered on A, known to B at once: registration is a Redis write.
      assert.deepEqual(
        (await get(`${b.url}users`, {
          headers: { "x-messaging-token": utf8Header(token) },
        })).json,
        { users: ["Zoë"] },
      );
      assert.deepEqual(
        (await post(b.url, '{"text":"from B"}', token)).json,
        { status: "added" },
      );
      // A may serve GET / from its local copy; it must drop it when B writes.
      await eventually(async () =>
        JSON.stringify((await get(a.url)).json) ===
          JSON.stringify([{ text: "from B", color: "black", user: "Zoë" }])
      );
      assert.equal((await post(`${b.url}quote`, "Set on B.")).json, null);
      await eventually(async () =>
        (await get(`${a.url}quote`)).json === "Set on B."
      );

      // B now keeps a copy of the user list; A's registration must drop it.
      const { json: { token: other } } = await post(`${a.url}users`, "Åsa");
      const listOn = (server: RunningServer) =>
        get(`${server.url}users`, {
          headers: { "x-messaging-token": utf8Header(other) },
        }).then((r) => JSON.stringify(r.json.users));
      await eventually(async () => (await listOn(b)) === '["Zoë","Åsa"]');

      // A now keeps Zoë's token; B's unregistration must revoke it there.
      const zoe = { "x-messaging-token": utf8Header(token) };
      assert.equal((await get(`${a.url}users`, { headers: zoe })).status, 200);
      assert.deepEqual(
        (await get(`${b.url}users`, { method: "DELETE", headers: zoe })).json,
        { Goodbye: "Zoë" },
      );
      const unauthorized = {
        status: 401,
        json: { status: 401, message: "Unauthorized" },
      };
      // At once on the process that removed it; on the other as soon as
      // the removal notice arrives.
      assert.deepEqual(
        await get(`${b.url}users`, { headers: zoe }),
        unauthorized,
      );
      await eventually(async () =>
        (await get(`${a.url}users`, { headers: zoe })).status === 401
      );
      assert.deepEqual(
        await get(`${a.url}users`, { headers: zoe }),
        unauthorized,
      );
      await eventually(async () => (await listOn(a)) === '["Åsa"]');
    });
  },
});

Deno.test({
  name:
    "look-alike names registered at once through two processes: exactly one wins, the check is in the same step",
  ignore: missing,
  async fn() {
    await withCluster(2, [], async ([a, b]) => {
      // Latin, Cyrillic and Greek letters that look the same, mixed.
      const looks = ["\u0430", "a"].flatMap((first) =>
        ["o", "\u043e", "\u03bf"].flatMap((second) =>
          ["p", "\u0440", "\u03c1"].map((third) =>
            `${first}d${second}${third}t`
          )
        )
      );
      const answers = await Promise.all(
        looks.map((name, i) => post(`${(i % 2 ? a : b).url}users`, name)),
      );
      assert.equal(answers.filter((r) => r.status === 200).length, 1);
      for (const lost of answers.filter((r) => r.status !== 200)) {
        assert.equal(lost.json.errors[0].description, "This user exists!");
      }
    });
  },
});

Deno.test({
  name: "100 registrations of one name over two processes: exactly one wins",
  ignore: missing,
  async fn() {
    await withCluster(2, [], async ([a, b]) => {
      const answers = await Promise.all(
        Array.from(
          { length: 100 },
          (_, i) => post(`${(i % 2 ? a : b).url}users`, "Same"),
        ),
      );
      const won = answers.filter((r) => r.status === 200);
      assert.equal(won.length, 1);
      for (const lost of answers.filter((r) => r.status !== 200)) {
        assert.equal(lost.status, 400);
        assert.equal(lost.json.errors[0].description, "This user exists!");
      }
      assert.equal(
        (await get(`${b.url}users`, {
          headers: {
            "x-messaging-token": utf8Header(itemAt(won, 0).json.token),
          },
        })).json.users.length,
        1,
      );
    });
  },
});

Deno.test({
  name: "--max-users and --history hold across processes",
  ignore: missing,
  async fn() {
    await withCluster(2, ["--max-users=2", "--history=5"], async ([a, b]) => {
      const one = (await post(`${a.url}users`, "one")).json.token;
      assert.equal((await post(`${b.url}users`, "two")).status, 200);
      const full = await post(`${a.url}users`, "three");
      assert.equal(full.status, 503);
      assert.equal(full.json.status, "error");
      for (let i = 0; i < 8; i++) {
        await post((i % 2 ? a : b).url, `{"text":"m${i}"}`, one);
      }
      await eventually(async () =>
        (await get(a.url)).json.map((m: { text: string }) => m.text).join() ===
          "m7,m6,m5,m4,m3"
      );
    });
  },
});

Deno.test({
  name:
    "Redis dying mid-run answers 503 without hanging or crashing, and the service recovers when it returns",
  ignore: missing,
  async fn() {
    await withCluster(1, [], async ([server], redis) => {
      const { json: { token } } = await post(`${server.url}users`, "ann");
      await post(server.url, '{"text":"before"}', token);
      assert.equal((await get(server.url)).json.length, 1);

      await redis.kill();
      // The process can tell only once its sockets report the loss; until
      // then a read from the local copy is a read of what Redis last held.
      await eventually(() =>
        Promise.resolve(/\(changes\): connection lost/.test(server.stderr()))
      );
      const down = {
        status: 503,
        json: { status: 503, message: "Service Unavailable" },
      };
      // Every kind of request: reads served from a local copy included.
      assert.deepEqual(await get(server.url), down);
      assert.deepEqual(await get(`${server.url}quote`), down);
      assert.deepEqual(await post(`${server.url}users`, "bob"), down);
      assert.deepEqual(await post(server.url, '{"text":"x"}', token), down);
      assert.deepEqual(await post(`${server.url}quote`, "Down."), down);

      await redis.restart();
      await eventually(async () =>
        (await get(`${server.url}quote`)).status === 200
      );
      // The restarted Redis is empty: what the process saw before is not served.
      assert.deepEqual((await get(server.url)).json, []);
      const again = await post(`${server.url}users`, "ann");
      assert.equal(again.status, 200);
      await post(server.url, '{"text":"after"}', again.json.token);
      assert.equal((await get(server.url)).json[0].text, "after");
      assert.match(server.stderr(), /connection lost/);
      assert.match(server.stderr(), /connection restored/);
    });
  },
});

Deno.test({
  name:
    "Redis that stops answering (frozen): new requests are 503 without waiting, writes in flight are answered once Redis says what became of them, and none answered 503 takes effect",
  ignore: missing,
  async fn() {
    await withCluster(1, [], async ([server], redis) => {
      const { json: { token } } = await post(`${server.url}users`, "ann");
      const { json: { token: leaver } } = await post(
        `${server.url}users`,
        "leaver",
      );
      // Both tokens are kept locally now, so the writes below reach Redis
      // without a read first.
      for (const t of [token, leaver]) {
        const res = await get(`${server.url}users`, {
          headers: { "x-messaging-token": utf8Header(t) },
        });
        assert.equal(res.status, 200);
      }
      const down = {
        status: 503,
        json: { status: 503, message: "Service Unavailable" },
      };
      redis.pause();
      let inFlight: Promise<{ status: number; json: unknown }>[] = [];
      try {
        const write = (url: string, init: RequestInit) =>
          fetch(url, { ...init, signal: AbortSignal.timeout(30_000) }).then(
            async (res) => ({ status: res.status, json: await res.json() }),
          );
        inFlight = [
          write(`${server.url}users`, { method: "POST", body: "bob" }),
          write(`${server.url}quote`, { method: "POST", body: "Frozen." }),
          write(server.url, {
            method: "POST",
            body: '{"text":"frozen"}',
            headers: { "x-messaging-token": utf8Header(token) },
          }),
          write(`${server.url}users`, {
            method: "DELETE",
            headers: { "x-messaging-token": utf8Header(leaver) },
          }),
        ];
        // Once they have waited past the command timeout, Redis is known
        // to be stalled: what comes next is refused without being sent
        // (get() gives up after 5 s), while Redis is still frozen.
        await new Promise((resolve) => setTimeout(resolve, 1500));
        assert.deepEqual(await post(`${server.url}users`, "carol"), down);
        assert.deepEqual(await post(`${server.url}quote`, "Later."), down);
        // The writes in flight may have run: they are not answered yet.
        const pending = Symbol("pending");
        for (const answer of inFlight) {
          assert.equal(
            await Promise.race([answer, Promise.resolve(pending)]),
            pending,
          );
        }
      } finally {
        redis.resume();
      }
      // Redis ran them after their fence: they did nothing, and say so.
      for (const answer of await Promise.all(inFlight)) {
        assert.deepEqual(answer, down);
      }
      await eventually(async () =>
        (await post(`${server.url}users`, "late")).status === 200
      );
      const late = await post(`${server.url}users`, "later");
      assert.match(late.json.token, /^later-[0-9a-f]{40}$/);
      const users = await get(`${server.url}users`, {
        headers: { "x-messaging-token": utf8Header(late.json.token) },
      });
      assert.deepEqual(users.json.users, ["ann", "leaver", "late", "later"]);
      assert.equal((await get(`${server.url}quote`)).json, "Not set, yet !");
      assert.deepEqual((await get(server.url)).json, []);
    });
  },
});

Deno.test({
  name: "start-up with Redis unreachable fails at once with a clear message",
  async fn() {
    const port = freePort();
    const { code, stderr } = await runProgram([
      `--store=redis://127.0.0.1:${port}/0`,
      "--port=0",
    ]);
    assert.equal(code, 1);
    assert.match(
      stderr,
      new RegExp(
        `^error: cannot connect to Redis at redis://127\\.0\\.0\\.1:${port}/0: `,
      ),
    );
    assert.doesNotMatch(stderr, /\n\s+at /, "no stack trace");
  },
});

Deno.test("deno serve --parallel refuses the memory store", async () => {
  await assert.rejects(
    startServer([], { LMS_STORE: "memory" }, { workers: 2 }),
    /error: deno serve --parallel needs a shared store.*LMS_STORE=redis:/,
  );
});

Deno.test("deno task serve:parallel refuses flags meant for deno serve, naming DENO_SERVE_ADDRESS", async () => {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["task", "serve:parallel", "--port=1234", "--host=127.0.0.1"],
    cwd: new URL("../../", import.meta.url).pathname,
    env: { DENO_JOBS: "1" },
    stdout: "null",
    signal: AbortSignal.timeout(20_000),
  }).output();
  assert.equal(code, 2);
  assert.match(
    new TextDecoder().decode(stderr),
    /^error: serve\.ts takes no flags \(got --port=1234 --host=127\.0\.0\.1\): set the address with DENO_SERVE_ADDRESS=tcp:HOST:PORT/m,
  );
});

Deno.test("deno serve listens where DENO_SERVE_ADDRESS says", async () => {
  const port = freePort();
  const server = await startServer([], {
    DENO_SERVE_ADDRESS: `tcp:127.0.0.1:${port}`,
  }, { workers: 1, address: false });
  try {
    assert.equal(server.url, `http://127.0.0.1:${port}/`);
    assert.equal((await get(`${server.url}quote`)).json, "Not set, yet !");
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

Deno.test("deno serve with one worker and the memory store serves and stops on SIGTERM", async () => {
  const server = await startServer([], {}, { workers: 1 });
  assert.match(server.banner, /\(services: messaging, quote\)$/);
  assert.equal(
    (await post(`${server.url}quote`, "Served by deno serve.")).json,
    null,
  );
  assert.equal((await get(`${server.url}quote`)).json, "Served by deno serve.");
  assert.equal(await server.stop(), 0);
});

Deno.test({
  name:
    "deno serve --parallel: SIGTERM while a worker is still starting cuts nothing short: every request answered is logged",
  ignore: missing,
  async fn() {
    const redis = await startRedis();
    try {
      // The banner comes with the first worker; the second may still be
      // starting when the signal arrives, which once ended the process
      // before the first had written its log. Several rounds, as it is a race.
      for (let round = 0; round < 8; round++) {
        const server = await startServer([], { LMS_STORE: redis.url }, {
          workers: 2,
        });
        for (let i = 0; i < 3; i++) {
          const res = await fetch(`${server.url}quote`, {
            headers: { connection: "close" },
          });
          assert.equal(res.status, 200);
          await res.body?.cancel();
        }
        assert.equal(await server.stop(), 0, server.stderr());
        const logged = server.stderr().split("\n").filter((line) =>
          / GET \/quote 200 /.test(line)
        );
        assert.equal(logged.length, 3, `round ${round}: ${server.stderr()}`);
      }
    } finally {
      await redis.kill();
    }
  },
});

Deno.test({
  name:
    "deno serve --parallel with Redis: every worker sees the same state, and SIGTERM stops them all",
  ignore: missing,
  async fn() {
    const redis = await startRedis();
    const server = await startServer([], { LMS_STORE: redis.url }, {
      workers: 2,
    });
    try {
      // Fresh connections spread over the workers; each must know every user.
      const tokens: string[] = [];
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`${server.url}users`, {
          method: "POST",
          body: `u${i}`,
          headers: { connection: "close" },
        });
        assert.equal(res.status, 200);
        tokens.push((await res.json()).token);
      }
      for (const token of tokens) {
        const res = await fetch(`${server.url}users`, {
          headers: { "x-messaging-token": token, connection: "close" },
        });
        assert.equal(res.status, 200);
        assert.equal((await res.json()).users.length, 20);
      }
      assert.equal(await server.stop(), 0);
    } finally {
      await server.stop("SIGKILL");
      await redis.kill();
    }
  },
});

Deno.test({
  name:
    "100 posts alternating between two processes reach streams on both, in one id order, once each",
  ignore: missing,
  async fn() {
    await withCluster(2, [], async ([a, b]) => {
      const { json: { token } } = await post(`${a.url}users`, "ann");
      const readers = await Promise.all([
        openEvents(a.url),
        openEvents(b.url),
        openEvents(a.url),
        openEvents(b.url),
      ]);
      await Promise.all(readers.map((r) => r.next())); // retry
      const posts = [];
      for (let i = 1; i <= 100; i++) {
        posts.push(post(i % 2 ? a.url : b.url, `{"text":"m${i}"}`, token));
        if (i % 10 === 0) await Promise.all(posts.splice(0));
      }
      for (const reader of readers) {
        const events = await reader.events(100);
        assert.deepEqual(
          events.map((e) => Number(e.id)),
          Array.from({ length: 100 }, (_, i) => i + 1),
        );
        assert.deepEqual(
          new Set(events.map((e) => JSON.parse(e.data).text)).size,
          100,
        );
        await reader.close();
      }
    });
  },
});

Deno.test({
  name:
    "a lost Redis connection ends the streams, and readers that resume with Last-Event-ID miss nothing retained",
  ignore: missing,
  async fn() {
    await withCluster(2, [], async ([a, b], redis) => {
      const { json: { token } } = await post(`${a.url}users`, "ann");
      await post(a.url, '{"text":"before"}', token);
      const reader = await openEvents(b.url);
      const seen = await reader.event();
      assert.equal(seen.id, "1");
      // Cut every subscription, as a network failure would.
      await redis.cli("CLIENT", "KILL", "TYPE", "pubsub");
      let item;
      do item = await reader.next(5000); while (item !== null);
      for (const text of ["x", "y"]) {
        assert.equal(
          (await post(a.url, `{"text":"${text}"}`, token)).status,
          200,
        );
      }
      const resumed = await openEvents(b.url, seen.id);
      const events = await resumed.events(2);
      assert.deepEqual(events.map((e) => e.id), ["2", "3"]);
      assert.deepEqual(events.map((e) => JSON.parse(e.data).text), ["x", "y"]);
      await resumed.close();
    });
  },
});
