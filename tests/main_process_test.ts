import assert from "node:assert/strict";
import { CONTENT_TYPE, utf8Header } from "./_support/call.ts";
import { postMessage, register } from "./_support/over_http.ts";
import { permissionsOf, runProgram, startServer } from "./_support/program.ts";
import { redisServerPath, startRedis } from "./_support/redis_server.ts";

async function json(res: Response) {
  assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
  return await res.json();
}

Deno.test("the program serves both services over HTTP and stops cleanly on SIGTERM", async () => {
  const server = await startServer();
  assert.match(
    server.banner,
    /^Listening on http:\/\/127\.0\.0\.1:\d+\/ \(services: messaging, quote\)$/,
  );
  const url = server.url;

  const reg = await fetch(`${url}users`, { method: "POST", body: "José" });
  assert.equal(reg.status, 200);
  const { token } = await json(reg);
  assert.match(token, /^José-[0-9a-f]{40}$/);
  const auth = { "x-messaging-token": utf8Header(token) };

  const list = await fetch(`${url}users`, { headers: auth });
  assert.deepEqual(await json(list), { users: ["José"] });
  const post = await fetch(url, {
    method: "POST",
    headers: auth,
    body: '{"text":"olá","color":"red"}',
  });
  assert.deepEqual(await json(post), { status: "added" });
  assert.deepEqual(await json(await fetch(`${url}?page=2`)), [{
    text: "olá",
    color: "red",
    user: "José",
  }]);

  assert.equal(await json(await fetch(`${url}quote`)), "Not set, yet !");
  const quote = await fetch(`${url}quote`, { method: "POST", body: "Ça va?" });
  assert.equal(quote.status, 400);
  assert.equal(
    (await json(quote)).errors[0].description,
    "Does not start with a majuscule",
  );
  assert.equal(
    await json(
      await fetch(`${url}quote`, { method: "POST", body: "Ok ça va?" }),
    ),
    null,
  );
  assert.equal(await json(await fetch(`${url}quote`)), "Ok ça va?");

  const bye = await fetch(`${url}users`, { method: "DELETE", headers: auth });
  assert.deepEqual(await json(bye), { Goodbye: "José" });
  const dead = await fetch(`${url}users`, { headers: auth });
  assert.equal(dead.status, 401);
  assert.deepEqual(await json(dead), { status: 401, message: "Unauthorized" });

  const head = await fetch(`${url}quote`, { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(
    head.headers.get("content-length"),
    String(new TextEncoder().encode('"Ok ça va?"').length),
  );
  assert.equal(await head.text(), "");

  assert.equal(await server.stop("SIGTERM"), 0);
  const log = server.stderr();
  assert.match(
    log,
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z POST \/users 200 \d+\.\d+ms$/m,
  );
  const stamp = Date.parse(log.slice(0, log.indexOf(" ")));
  assert.ok(Math.abs(Date.now() - stamp) < 60_000, "the time is now, in UTC");
  assert.match(log, /Z GET \/ 200 /m, "the query is not logged");
  assert.doesNotMatch(log, /[0-9a-f]{40}/, "no token in the log");
});

for (
  const [service, served, refused] of [
    ["messaging", ["/", "/users"], ["/quote"]],
    ["quote", ["/quote"], ["/", "/users"]],
  ] as const
) {
  Deno.test(`--service=${service} answers 404 on the other service's paths`, async () => {
    const server = await startServer([`--service=${service}`, "--quiet"]);
    try {
      assert.match(server.banner, new RegExp(`\\(services: ${service}\\)$`));
      for (const path of served) {
        const res = await fetch(`${server.url}${path.slice(1)}`, {
          method: "POST",
          body: "x",
        });
        assert.notEqual(res.status, 404, path);
        await res.body?.cancel();
      }
      for (const path of refused) {
        for (const method of ["GET", "POST"]) {
          const res = await fetch(`${server.url}${path.slice(1)}`, {
            method,
            body: method === "POST" ? "x" : undefined,
          });
          assert.equal(res.status, 404, `${method} ${path}`);
          assert.deepEqual(await json(res), {
            status: 404,
            message: "Not Found",
          });
        }
      }
    } finally {
      assert.equal(await server.stop(), 0);
    }
    assert.equal(server.stderr(), "", "--quiet logs nothing");
  });
}

Deno.test("a body over --max-body-bytes is 413 over the wire, declared or chunked", async () => {
  const server = await startServer(["--max-body-bytes=100", "--quiet"]);
  try {
    const declared = await fetch(`${server.url}quote`, {
      method: "POST",
      body: "A".repeat(101) + ".",
    });
    assert.equal(declared.status, 413);
    assert.match((await json(declared)).errors[0].description, /100 bytes/);
    let sent = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > 1 << 20) return controller.close();
        sent += 4096;
        controller.enqueue(new Uint8Array(4096).fill(0x41));
      },
    });
    const chunked = await fetch(`${server.url}users`, {
      method: "POST",
      body: endless,
    });
    assert.equal(chunked.status, 413);
    await chunked.body?.cancel();
    const ok = await fetch(`${server.url}quote`, {
      method: "POST",
      body: "A".repeat(99) + ".",
    });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
  } finally {
    await server.stop();
  }
});

Deno.test("SIGINT lets a request in flight finish, then exits 0", async () => {
  const server = await startServer(["--quiet"]);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(new TextEncoder().encode("Slow"));
      await held;
      controller.enqueue(new TextEncoder().encode(" but fine."));
      controller.close();
    },
  });
  const inFlight = fetch(`${server.url}quote`, { method: "POST", body });
  await new Promise((r) => setTimeout(r, 200));
  server.process.kill("SIGINT");
  await new Promise((r) => setTimeout(r, 200));
  release();
  const res = await inFlight;
  assert.equal(res.status, 200);
  assert.equal(await res.json(), null);
  assert.equal(await server.stop(), 0);
});

Deno.test("PORT is the fallback for --port", async () => {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const server = await startServer(["--quiet"], { PORT: String(port) }, {
    port: false,
  });
  try {
    assert.equal(server.url, `http://127.0.0.1:${port}/`);
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

const badFlags: [string[], RegExp, Record<string, string>?][] = [
  [["--port=x"], /--port/],
  [["--port=70000"], /--port/],
  [["--port=-1"], /port/],
  [["--service=chat"], /--service/],
  [["--max-body-bytes=0"], /--max-body-bytes/],
  [["--body-timeout-ms=0"], /--body-timeout-ms/],
  [["--drain-timeout-ms=soon"], /--drain-timeout-ms/],
  [["--history=4"], /--history/],
  [["--max-users=ten"], /--max-users/],
  [["--bogus"], /bogus/],
  [["positional"], /positional/i],
  [["--quiet=yes"], /quiet/],
  [[], /PORT/, { PORT: "eighty" }],
];

for (const [args, message, env] of badFlags) {
  Deno.test(`bad start-up ${args.join(" ") || JSON.stringify(env)} exits 2 with one line naming it`, async () => {
    const { code, stdout, stderr } = await runProgram(args, env);
    assert.equal(code, 2);
    assert.equal(stdout, "");
    assert.equal(stderr.trimEnd().split("\n").length, 1, stderr);
    assert.match(stderr, message);
  });
}

Deno.test("--help prints the flags and exits 0", async () => {
  const { code, stdout } = await runProgram(["--help"]);
  assert.equal(code, 0);
  for (
    const flag of [
      "--service",
      "--port",
      "--hostname",
      "--max-body-bytes",
      "--body-timeout-ms",
      "--drain-timeout-ms",
      "--history",
      "--max-users",
      "--quiet",
    ]
  ) {
    assert.match(stdout, new RegExp(flag));
  }
});

Deno.test("a memory-store program loads no npm package: it starts from an empty cache with --cached-only, where a Redis store cannot", async () => {
  const denoDir = await Deno.makeTempDir({ prefix: "lms-empty-cache-" });
  try {
    const env = { DENO_DIR: denoDir };
    const server = await startServer(["--quiet"], env, {
      denoFlags: ["--cached-only"],
    });
    assert.equal(await server.stop(), 0);

    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--cached-only",
        ...permissionsOf("start"),
        new URL("../main.ts", import.meta.url).pathname,
        "--port=0",
        "--store=redis://127.0.0.1:1/0",
      ],
      env,
      stdout: "null",
      stderr: "piped",
      signal: AbortSignal.timeout(30_000),
    }).output();
    assert.notEqual(code, 0);
    assert.match(new TextDecoder().decode(stderr), /not found in cache/);
  } finally {
    await Deno.remove(denoDir, { recursive: true });
  }
});

Deno.test("no request log line is lost when the program stops right after answering", async () => {
  const server = await startServer();
  const count = 300;
  await Promise.all(
    Array.from({ length: count }, async () => {
      const res = await fetch(`${server.url}quote`);
      await res.body?.cancel();
    }),
  );
  assert.equal(await server.stop("SIGTERM"), 0);
  const lines = server.stderr().split("\n").filter((line) =>
    / GET \/quote 200 /.test(line)
  );
  assert.equal(lines.length, count);
});

Deno.test({
  name:
    "on SIGTERM a write still waiting for a frozen Redis at the drain deadline is answered 500, and the process exits 0",
  ignore: redisServerPath() === undefined,
  fn: async () => {
    const redis = await startRedis();
    const server = await startServer([
      "--quiet",
      `--store=${redis.url}`,
      "--drain-timeout-ms=1000",
    ]);
    try {
      const token = await register(server.url, "ann");
      await postMessage(server.url, token, "before");
      redis.pause();
      const answer = fetch(server.url, {
        method: "POST",
        headers: { "x-messaging-token": utf8Header(token) },
        body: JSON.stringify({ text: "while frozen" }),
      });
      await new Promise((r) => setTimeout(r, 300));
      server.process.kill("SIGTERM");
      // Before, the connection was cut at exit with no answer at all.
      const res = await answer;
      assert.equal(res.status, 500);
      assert.equal((await json(res)).status, 500);
      assert.equal(await server.stop(), 0);
    } finally {
      redis.resume();
      await redis.kill();
    }
  },
});
