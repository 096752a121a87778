/**
 * deploy/nginx.conf, run by Debian's nginx in front of the real program
 * started with --trust-proxy, checked from outside through the proxy.
 * Clients come from distinct loopback addresses (127.0.x.y) to be distinct
 * clients, as they would on the internet.
 */

import assert from "node:assert/strict";
import { type RunningServer, startServer } from "../_support/program.ts";
import {
  nginxMissing,
  type RunningProxy,
  SHIPPED_NGINX_CONF,
  shippedSeconds,
  startProxy,
} from "../_support/nginx.ts";
import { readEvents } from "../_support/event_reader.ts";
import { openSocket, rawUpgrade } from "../_support/socket_reader.ts";
import { idleFlood, loopbackAddresses } from "../_support/idle_flood.ts";

const CONTENT_TYPE = "application/json; charset=UTF-8";

/** Runs `fn` against the program (with `args` and --trust-proxy) behind the shipped proxy. */
async function behindProxy(
  args: string[],
  fn: (proxy: RunningProxy, server: RunningServer) => Promise<void>,
): Promise<void> {
  const server = await startServer(["--trust-proxy", "--quiet", ...args]);
  try {
    const proxy = await startProxy(Number(new URL(server.url).port));
    try {
      await fn(proxy, server);
    } finally {
      await proxy.stop();
    }
  } finally {
    await server.stop();
  }
}

/** What a client at loopback `address` is answered. */
async function from(
  address: string,
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; headers: Headers; text: string }> {
  using client = Deno.createHttpClient({ localAddress: address });
  const res = await fetch(url, { ...init, client });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Registers `name` through the proxy and returns its token. */
async function register(proxy: RunningProxy, name: string): Promise<string> {
  const answer = await from("127.0.0.2", `${proxy.url}users`, {
    method: "POST",
    body: name,
  });
  assert.equal(answer.status, 200, answer.text);
  return JSON.parse(answer.text).token;
}

function proxyTest(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, ignore: nginxMissing !== undefined, fn });
}

proxyTest(
  "through the proxy: register, post, read and the quote answer as the program does",
  async () => {
    await behindProxy([], async (proxy) => {
      const registered = await from("127.0.0.2", `${proxy.url}users`, {
        method: "POST",
        body: "alice",
      });
      assert.equal(registered.status, 200, registered.text);
      assert.equal(registered.headers.get("content-type"), CONTENT_TYPE);
      const { token } = JSON.parse(registered.text);
      assert.match(token, /^alice-[0-9a-f]{40}$/);
      const posted = await from("127.0.0.2", proxy.url, {
        method: "POST",
        headers: { "x-messaging-token": token },
        body: JSON.stringify({ text: "through nginx", color: "red" }),
      });
      assert.deepEqual(JSON.parse(posted.text), { status: "added" });
      const read = await from("127.0.0.3", proxy.url);
      assert.deepEqual(JSON.parse(read.text), [
        { text: "through nginx", color: "red", user: "alice" },
      ]);
      const quoted = await from("127.0.0.3", `${proxy.url}quote`, {
        method: "POST",
        body: "Proxies pass it on.",
      });
      assert.equal(quoted.text, "null");
      const quote = await from("127.0.0.4", `${proxy.url}quote`);
      assert.equal(JSON.parse(quote.text), "Proxies pass it on.");
      const refused = await from("127.0.0.4", `${proxy.url}users`);
      assert.equal(refused.status, 401);
      assert.deepEqual(JSON.parse(refused.text), {
        status: 401,
        message: "Unauthorized",
      });
    });
  },
);

proxyTest(
  "through the proxy: a post reaches an open /events stream live, a new quote an open /quote/events",
  async () => {
    await behindProxy([], async (proxy) => {
      const token = await register(proxy, "bob");
      using client = Deno.createHttpClient({ localAddress: "127.0.0.5" });
      const messages = await fetch(`${proxy.url}events`, { client });
      assert.equal(
        messages.headers.get("content-type"),
        "text/event-stream; charset=utf-8",
      );
      const messageReader = readEvents(messages.body!);
      const quotes = readEvents(
        (await fetch(`${proxy.url}quote/events`, { client })).body!,
      );
      try {
        assert.deepEqual(await messageReader.next(), {
          type: "retry",
          ms: 1000,
        });
        assert.equal((await quotes.event()).data, '"Not set, yet !"');
        // Posted only once both streams are open: what arrives is live.
        await from("127.0.0.2", proxy.url, {
          method: "POST",
          headers: { "x-messaging-token": token },
          body: JSON.stringify({ text: "live" }),
        });
        await from("127.0.0.2", `${proxy.url}quote`, {
          method: "POST",
          body: "Live too.",
        });
        // Within 5 s, not whenever a proxy buffer fills.
        const message = await messageReader.event(5000);
        assert.equal(message.id, "1");
        assert.deepEqual(JSON.parse(message.data), {
          text: "live",
          color: "black",
          user: "bob",
        });
        const quote = await quotes.event(5000);
        assert.equal(quote.data, '"Live too."');
      } finally {
        await messageReader.close();
        await quotes.close();
      }
    });
  },
);

proxyTest(
  "a reader that stops reading is not buffered by the proxy: the program's bound on what waits for one reader ends its stream",
  async () => {
    await behindProxy([], async (proxy, server) => {
      const token = await register(proxy, "eve");
      const openStreams = async () =>
        Number(
          (await (await fetch(`${server.url}metrics`)).text())
            .match(/^lms_event_streams_open (\d+)/m)?.[1],
        );
      // Asks for the stream, then never reads a byte.
      const stalled = await Deno.connect({
        hostname: "127.0.0.1",
        port: proxy.port,
      });
      try {
        await stalled.write(
          new TextEncoder().encode("GET /events HTTP/1.1\r\nHost: x\r\n\r\n"),
        );
        for (let i = 0; i < 50 && await openStreams() === 0; i++) {
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        assert.equal(await openStreams(), 1);
        // Up to 24 MB of events: past the socket buffers on the way and the
        // program's 1 MiB, unless the proxy soaks them up (proxy_buffering
        // on reads them all, into a temporary file of up to 1 GB).
        const text = "x".repeat(60_000);
        let open = 1;
        for (let i = 0; i < 400 && open > 0; i++) {
          const posted = await from("127.0.0.2", proxy.url, {
            method: "POST",
            headers: { "x-messaging-token": token },
            body: JSON.stringify({ text }),
          });
          assert.equal(posted.status, 200);
          if (i % 20 === 19) open = await openStreams();
        }
        assert.equal(open, 0, "the stalled reader's stream was ended");
      } finally {
        stalled.close();
      }
    });
  },
);

proxyTest(
  "through the proxy with --trust-proxy: each client address has its own write allowance, and a forged X-Forwarded-For buys none",
  async () => {
    await behindProxy(["--rate-limit=2/3600"], async (proxy) => {
      const write = (address: string, headers: Record<string, string> = {}) =>
        from(address, `${proxy.url}quote`, {
          method: "POST",
          headers,
          body: "Counted apart.",
        });
      const statuses = async (
        address: string,
        count: number,
        headers?: Record<string, string>,
      ) => {
        const out = [];
        for (let i = 0; i < count; i++) {
          out.push((await write(address, headers)).status);
        }
        return out;
      };
      assert.deepEqual(await statuses("127.0.0.2", 3), [200, 200, 429]);
      // Everyone behind the proxy would share one allowance without the
      // address nginx appends: this client would be refused.
      assert.deepEqual(await statuses("127.0.0.3", 2), [200, 200]);
      // The spent client claims to be someone else: still itself.
      const forged = await write("127.0.0.2", {
        "x-forwarded-for": "127.0.0.9",
      });
      assert.equal(forged.status, 429, forged.text);
      assert.ok(Number(forged.headers.get("retry-after")) > 0);
      assert.equal(
        (await write("127.0.0.2", {
          "x-forwarded-for": "127.0.0.9, 127.0.0.3",
        }))
          .status,
        429,
      );
      // A fresh client naming the spent one is charged for itself.
      assert.deepEqual(
        await statuses("127.0.0.4", 3, { "x-forwarded-for": "127.0.0.2" }),
        [200, 200, 429],
      );
    });
  },
);

proxyTest(
  "the proxy bounds requests in progress per address: past limit_conn a stream is refused 429 in JSON, other addresses are served",
  async () => {
    const limit = Number(
      Deno.readTextFileSync(SHIPPED_NGINX_CONF).match(
        /^\s*limit_conn per_client (\d+);/m,
      )?.[1],
    );
    assert.ok(limit > 0 && limit <= 1000, "limit_conn per_client is set");
    // The program would allow far more, so the bound seen is the proxy's.
    await behindProxy(["--max-streams-per-client=5000"], async (proxy) => {
      using client = Deno.createHttpClient({ localAddress: "127.0.0.6" });
      const streams: ReadableStreamDefaultReader<Uint8Array>[] = [];
      try {
        for (let i = 0; i < limit; i++) {
          const res = await fetch(`${proxy.url}events`, { client });
          assert.equal(res.status, 200, `stream ${i + 1}`);
          streams.push(res.body!.getReader());
        }
        const refused = await from("127.0.0.6", `${proxy.url}events`);
        assert.equal(refused.status, 429);
        assert.equal(refused.headers.get("content-type"), CONTENT_TYPE);
        assert.equal(JSON.parse(refused.text).errors[0].name, "connections");
        using other = Deno.createHttpClient({ localAddress: "127.0.0.7" });
        const served = await fetch(`${proxy.url}events`, { client: other });
        assert.equal(served.status, 200);
        await served.body!.cancel();
      } finally {
        for (const stream of streams) await stream.cancel();
      }
    });
  },
);

proxyTest(
  "the proxy's own refusals are JSON: a body too large (413), /metrics from another address (403), the program down (502)",
  async () => {
    await behindProxy([], async (proxy, server) => {
      const json = async (
        answer: Promise<{ status: number; headers: Headers; text: string }>,
      ) => {
        const { status, headers, text } = await answer;
        assert.equal(headers.get("content-type"), CONTENT_TYPE, text);
        return { status, body: JSON.parse(text) };
      };
      // Above the proxy's limit: the proxy refuses it.
      const huge = await json(from("127.0.0.2", `${proxy.url}quote`, {
        method: "POST",
        body: "A".repeat(200_000),
      }));
      assert.equal(huge.status, 413);
      assert.equal(huge.body.errors[0].location, "body");
      // Between the program's limit and the proxy's: the program's own answer.
      const large = await json(from("127.0.0.2", `${proxy.url}quote`, {
        method: "POST",
        body: "A".repeat(100_000),
      }));
      assert.equal(large.status, 413);
      assert.match(large.body.errors[0].description, /65536/);
      assert.deepEqual(await json(from("127.0.0.3", `${proxy.url}metrics`)), {
        status: 403,
        body: { status: 403, message: "Forbidden" },
      });
      const metrics = await from("127.0.0.1", `${proxy.url}metrics`);
      assert.equal(metrics.status, 200);
      assert.match(metrics.text, /lms_http_requests_total/);
      await server.stop();
      assert.deepEqual(await json(from("127.0.0.2", proxy.url)), {
        status: 502,
        body: { status: 502, message: "Bad Gateway" },
      });
    });
  },
);

proxyTest(
  "an idle-connection flood through the proxy leaves a fresh client served, and the proxy closes each idle connection once its timeout passes",
  async () => {
    const headerS = shippedSeconds("client_header_timeout");
    const keepAliveS = shippedSeconds("keepalive_timeout");
    await behindProxy([], async (proxy) => {
      const flood = idleFlood({
        port: proxy.port,
        addresses: loopbackAddresses(30),
        count: 1500,
        holdMs: (Math.max(headerS, keepAliveS) + 15) * 1000,
      });
      try {
        const opened = await flood.opened;
        assert.deepEqual(
          { opened: opened.opened, failed: opened.failed },
          { opened: 1500, failed: 0 },
          opened.firstError,
        );
        // Fresh clients, each on a new connection, while the flood is held.
        for (let i = 0; i < 10; i++) {
          const res = await from("127.0.0.1", `${proxy.url}healthz`, {
            headers: { connection: "close" },
            signal: AbortSignal.timeout(5000),
          });
          assert.equal(res.status, 200);
        }
        const held = await flood.held;
        assert.equal(held.length, 1500);
        for (const connection of held) {
          assert.notEqual(connection.closedAt, null, "closed by the proxy");
          const idleS = (connection.closedAt! - connection.idleFrom) / 1000;
          const timeoutS = connection.kind === "keep-alive"
            ? keepAliveS
            : headerS;
          // Held (not refused at once), and closed once its timeout passed.
          // Seen from the client, which notices a connection open a little
          // after nginx accepted it: held for a bit less than the timeout.
          assert.ok(
            idleS >= timeoutS / 2 && idleS <= timeoutS + 10,
            `${connection.kind} closed after ${idleS} s (timeout ${timeoutS} s)`,
          );
        }
      } finally {
        flood.kill();
      }
    });
  },
);

proxyTest(
  "the program's WebSockets on /events and /quote/events pass through the proxy: frames, token frame, the page's origin let in, a foreign one refused, clients counted apart",
  async () => {
    await behindProxy(["--max-streams-per-client=1"], async (proxy) => {
      const ann = await register(proxy, "ann");
      // What a page served through the proxy sends: its own origin.
      const page = { origin: proxy.url.slice(0, -1) };
      using first = Deno.createHttpClient({ localAddress: "127.0.0.3" });
      using second = Deno.createHttpClient({ localAddress: "127.0.0.4" });
      const quote = await openSocket(`${proxy.url}quote/events`, page, first);
      assert.equal((await quote.frames(1))[0]?.event, "quote");
      // That client's one stream is open; another client's is not counted with it.
      const refused = await openSocket(`${proxy.url}events`, page, first);
      assert.equal(refused.socket.readyState, WebSocket.CLOSED);
      const events = await openSocket(`${proxy.url}events`, page, second);
      events.socket.send(JSON.stringify({ token: ann }));
      assert.deepEqual(await events.frames(1), [
        { event: "presence", data: { name: "ann", online: true } },
      ]);
      for (const path of ["events", "quote/events"]) {
        const foreign = await rawUpgrade(`${proxy.url}${path}`, {
          Origin: "https://evil.example",
        });
        foreign.conn.close();
        assert.equal(foreign.status, 403, path);
      }
      quote.close();
      events.close();
      assert.equal(await events.closed(), 1005);
    });
  },
);

const opensslMissing = new Deno.Command("sh", {
    args: ["-c", "command -v openssl"],
    stdout: "null",
  }).outputSync().success
  ? undefined
  : "openssl is not installed";

Deno.test({
  name:
    "the TLS lines, uncommented with a certificate filled in, serve the API and a live event stream over HTTPS",
  ignore: nginxMissing !== undefined || opensslMissing !== undefined,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "lms-tls-" });
    const server = await startServer(["--trust-proxy", "--quiet"]);
    try {
      const made = await new Deno.Command("openssl", {
        args: [
          "req",
          "-x509",
          "-newkey",
          "rsa:2048",
          "-nodes",
          "-days",
          "1",
          "-subj",
          "/CN=127.0.0.1",
          "-addext",
          "subjectAltName=IP:127.0.0.1",
          // rustls refuses a CA certificate as the server's own.
          "-addext",
          "basicConstraints=critical,CA:FALSE",
          "-keyout",
          `${dir}/key.pem`,
          "-out",
          `${dir}/cert.pem`,
        ],
        stderr: "null",
      }).output();
      assert.ok(made.success, "openssl made a certificate");
      const proxy = await startProxy(Number(new URL(server.url).port), {
        tls: { cert: `${dir}/cert.pem`, key: `${dir}/key.pem` },
      });
      using client = Deno.createHttpClient({
        caCerts: [await Deno.readTextFile(`${dir}/cert.pem`)],
      });
      try {
        const events = readEvents(
          (await fetch(`${proxy.tlsUrl}quote/events`, { client })).body!,
        );
        try {
          assert.equal((await events.event()).data, '"Not set, yet !"');
          const posted = await fetch(`${proxy.tlsUrl}quote`, {
            client,
            method: "POST",
            body: "Sealed in transit.",
          });
          assert.equal(await posted.text(), "null");
          assert.equal(
            posted.headers.get("strict-transport-security"),
            "max-age=31536000",
          );
          assert.equal(
            (await events.event(5000)).data,
            '"Sealed in transit."',
          );
        } finally {
          await events.close();
        }
      } finally {
        await proxy.stop();
      }
    } finally {
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
