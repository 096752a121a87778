/**
 * The program under hostile clients, over raw sockets: slow and stalled
 * bodies, bodies cut short, spoofed Host headers, more connections than the
 * process may open files, and shutdown while clients hold requests open.
 */
import assert from "node:assert/strict";
import { postMessage, register } from "./_support/over_http.ts";
import { runProgram, startServer } from "./_support/program.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** Sends `raw` on a new connection and returns everything the server writes before it closes or `waitMs` passes. */
async function rawExchange(
  port: number,
  raw: string,
  options: { halfClose?: boolean; waitMs?: number } = {},
): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(encoder.encode(raw));
  if (options.halfClose) await conn.closeWrite();
  let text = "";
  const buffer = new Uint8Array(4096);
  const timer = setTimeout(() => conn.close(), options.waitMs ?? 5000);
  try {
    for (;;) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += decoder.decode(buffer.subarray(0, n));
      if (/\r\n\r\n[\s\S]*\}$|\r\n\r\n[\s\S]*null$/.test(text)) break;
    }
  } catch {
    // Closed by the timer: what arrived is the answer.
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch {
      // Already closed.
    }
  }
  return text;
}

Deno.test("the Host header never chooses the route", async () => {
  const server = await startServer(["--quiet"]);
  try {
    const port = portOf(server.url);
    for (const host of ["x/users?", "x/quote?", "x/quote#"]) {
      const body = host.includes("quote") ? "Hijacked!" : "mallory";
      const answer = await rawExchange(
        port,
        `POST / HTTP/1.1\r\nHost: ${host}\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
      assert.match(answer, /^HTTP\/1\.1 401 /, `Host: ${host}`);
    }
    assert.equal(
      await (await fetch(`${server.url}quote`)).json(),
      "Not set, yet !",
    );
    const again = await fetch(`${server.url}users`, {
      method: "POST",
      body: "mallory",
    });
    assert.equal(again.status, 200, "mallory was never registered");
    await again.body?.cancel();
  } finally {
    await server.stop();
  }
});

Deno.test("stalled bodies are answered 408 at the deadline, and the server goes on serving", async () => {
  const server = await startServer(["--body-timeout-ms=300"]);
  try {
    const port = portOf(server.url);
    // Large declared bodies go through the stream reader, small ones
    // through Deno's own: both are held to the deadline.
    const stalled = Array.from({ length: 50 }, (_, i) =>
      rawExchange(
        port,
        `POST /quote HTTP/1.1\r\nHost: x\r\nContent-Length: ${
          i % 2 ? 65536 : 100
        }\r\n\r\nA`,
      ));
    const answers = await Promise.all(stalled);
    for (const answer of answers) {
      assert.match(answer, /^HTTP\/1\.1 408 /);
      assert.match(answer, /did not arrive within 0\.3 s/);
    }
    assert.equal((await fetch(`${server.url}quote`)).status, 200);
  } finally {
    await server.stop();
  }
  assert.doesNotMatch(server.stderr(), /^\s+at /m, "no stack in the log");
});

Deno.test("a body cut short is a client error, logged as one line with no stack", async () => {
  const server = await startServer();
  try {
    const port = portOf(server.url);
    const token = (await (await fetch(`${server.url}users`, {
      method: "POST",
      body: "ann",
    })).json()).token;
    for (
      const [path, headers] of [
        ["/quote", ""],
        ["/users", ""],
        ["/", `X-Messaging-Token: ${token}\r\n`],
      ]
    ) {
      const answer = await rawExchange(
        port,
        `POST ${path} HTTP/1.1\r\nHost: x\r\n${headers}Content-Length: 100\r\n\r\nHello.`,
        { halfClose: true, waitMs: 2000 },
      );
      assert.doesNotMatch(answer, /^HTTP\/1\.1 5/, `${path}: ${answer}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  } finally {
    await server.stop();
  }
  const log = server.stderr();
  assert.doesNotMatch(log, /fault|^\s+at /m, log);
  assert.doesNotMatch(log, / 500 /);
});

Deno.test("SIGTERM exits 0 within the drain deadline plus a second while a client holds a body open", async () => {
  const server = await startServer(["--drain-timeout-ms=500"]);
  const port = portOf(server.url);
  const held = rawExchange(
    port,
    "POST /quote HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nHel",
    { waitMs: 5000 },
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  const start = performance.now();
  const code = await server.stop("SIGTERM");
  const elapsed = performance.now() - start;
  assert.equal(code, 0);
  assert.ok(elapsed < 1500 + 500, `exited after ${elapsed.toFixed(0)} ms`);
  const answer = await held;
  assert.ok(
    answer === "" || /^HTTP\/1\.1 503 /.test(answer),
    `the held request was answered 503 or closed: ${answer}`,
  );
});

Deno.test("SIGTERM does not wait for an event-stream reader that takes nothing: the process exits long before its drain deadline", async () => {
  const server = await startServer(["--quiet", "--drain-timeout-ms=30000"]);
  const stalled = await Deno.connect({ port: portOf(server.url) });
  try {
    await stalled.write(
      encoder.encode("GET /events HTTP/1.1\r\nHost: x\r\n\r\n"),
    );
    const token = await register(server.url, "ann");
    // Far more than the socket buffers hold, so Deno has bytes it cannot write.
    for (let i = 0; i < 120; i++) {
      await postMessage(server.url, token, "x".repeat(60_000));
    }
    const signalled = performance.now();
    assert.equal(await server.stop("SIGTERM"), 0);
    const seconds = (performance.now() - signalled) / 1000;
    assert.ok(seconds < 10, `exited ${seconds.toFixed(1)} s after SIGTERM`);
  } finally {
    stalled.close();
  }
});

Deno.test("the 503s sent while stopping are in the request log", async () => {
  const server = await startServer(["--drain-timeout-ms=1500"]);
  const port = portOf(server.url);
  const held = rawExchange(
    port,
    "POST /quote HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nHel",
    { waitMs: 4000 },
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  server.process.kill("SIGTERM");
  await new Promise((resolve) => setTimeout(resolve, 200));
  const refused = await fetch(`${server.url}quote`);
  await refused.body?.cancel();
  assert.equal(refused.status, 503);
  assert.equal(await server.stop(), 0);
  await held;
  assert.match(server.stderr(), /Z GET \/quote 503 \d+\.\d+ms$/m);
});

Deno.test("running out of file descriptors sheds new connections but never ends the process", async () => {
  const server = await startServer(["--quiet"], {}, {
    prefix: ["prlimit", "--nofile=256", "--"],
  });
  const port = portOf(server.url);
  const conns: Deno.Conn[] = [];
  try {
    for (let i = 0; i < 300; i++) {
      try {
        conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
      } catch {
        break;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const conn of conns.splice(0)) conn.close();
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      try {
        const res = await fetch(`${server.url}quote`);
        status = res.status;
        await res.body?.cancel();
      } catch {
        // Not listening again yet.
      }
    }
    assert.equal(status, 200, server.stderr());
  } finally {
    for (const conn of conns) conn.close();
    assert.equal(await server.stop(), 0, server.stderr());
  }
  assert.match(server.stderr(), /accepting connections failed/);
});

Deno.test("bad addresses and Redis credentials are one clean line", async () => {
  const host = await runProgram([
    "--hostname=no.such.host.invalid",
    "--port=0",
  ]);
  assert.equal(host.code, 2, host.stderr);
  assert.match(
    host.stderr,
    /^error: --hostname=no\.such\.host\.invalid is not an address of this machine: .+ \(see --help\)\n$/,
  );
  const redis = await runProgram([
    "--port=0",
    "--store=redis://:s3cret@127.0.0.1:1/0",
  ]);
  assert.equal(redis.code, 1, redis.stderr);
  assert.doesNotMatch(redis.stderr, /s3cret/);
  assert.match(
    redis.stderr,
    /^error: cannot connect to Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:1\/0: /,
  );
});
