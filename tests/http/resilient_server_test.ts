/**
 * The server that listens again after a failing accept, in its ordinary
 * life: listening, serving, stopping. Running out of file descriptors, the
 * failure it exists for, is driven for real by tests/hostile_process_test.ts.
 */
import assert from "node:assert/strict";
import {
  type ResilientServeOptions,
  serveResilient,
} from "../../src/http/resilient_server.ts";

function options(
  overrides: Partial<ResilientServeOptions> = {},
): ResilientServeOptions & { reports: string[]; listened: Deno.NetAddr[] } {
  const reports: string[] = [];
  const listened: Deno.NetAddr[] = [];
  return {
    hostname: "127.0.0.1",
    port: 0,
    onListen: (addr) => listened.push(addr),
    onError: () => new Response("handler failed", { status: 500 }),
    report: (message, level) => reports.push(`${level}: ${message}`),
    reports,
    listened,
    ...overrides,
  };
}

Deno.test("it serves the handler on the real port it was given for 0, and says so once", async () => {
  const opts = options();
  const server = serveResilient(
    opts,
    (req) => new Response(new URL(req.url).pathname),
  );
  try {
    assert.notEqual(server.addr.port, 0);
    assert.deepEqual(opts.listened, [server.addr]);
    const res = await fetch(`http://127.0.0.1:${server.addr.port}/hello`);
    assert.equal(await res.text(), "/hello");
  } finally {
    await server.shutdown();
  }
  assert.deepEqual(opts.reports, []);
});

Deno.test("a handler that throws is answered by onError", async () => {
  const server = serveResilient(options(), () => {
    throw new Error("bug");
  });
  try {
    const res = await fetch(`http://127.0.0.1:${server.addr.port}/`);
    assert.equal(res.status, 500);
    assert.equal(await res.text(), "handler failed");
  } finally {
    await server.shutdown();
  }
});

Deno.test("shutdown settles finished and the port stops accepting", async () => {
  const server = serveResilient(options(), () => new Response("ok"));
  const { port } = server.addr;
  await server.shutdown();
  await server.finished;
  await assert.rejects(
    Deno.connect({ hostname: "127.0.0.1", port }),
    Deno.errors.ConnectionRefused,
  );
});

Deno.test("a first listen that fails throws, as Deno.serve does", () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (taken.addr as Deno.NetAddr).port;
    assert.throws(
      () => serveResilient(options({ port }), () => new Response("ok")),
      Deno.errors.AddrInUse,
    );
  } finally {
    taken.close();
  }
});

Deno.test("Deno stops listening when a handler throws after upgrading to a WebSocket: the server listens again", async () => {
  const opts = options();
  const server = serveResilient(opts, (req) => {
    if (req.headers.get("upgrade") === null) return new Response("ok");
    Deno.upgradeWebSocket(req);
    throw new Error("a bug after the upgrade");
  });
  try {
    const url = `http://127.0.0.1:${server.addr.port}/`;
    for (let round = 0; round < 2; round++) {
      // Its handshake is never answered: given up after a while.
      const socket = new WebSocket(url.replace("http", "ws"));
      await new Promise((resolve) => {
        socket.onerror = socket.onclose = resolve;
        setTimeout(resolve, 1000);
      });
      socket.close();
      let status = 0;
      for (let i = 0; i < 50 && status !== 200; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = await fetch(url).then(async (res) => {
          await res.body?.cancel();
          return res.status;
        }, () => 0);
      }
      assert.equal(status, 200, `served again after round ${round}`);
    }
    assert.ok(
      opts.reports.some((line) => line.startsWith("error: ")),
      "the operator is told",
    );
  } finally {
    await server.shutdown();
  }
});
