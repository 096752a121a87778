/**
 * Readers that stop reading, over real sockets from one source address:
 * their streams are cut by the bound, but their connections, which Deno
 * keeps while it still holds bytes for them, keep their client's places
 * under the caps until the client closes them.
 */
import assert from "node:assert/strict";
import { type RunningServer, startServer } from "../_support/program.ts";
import { stallReaders } from "../_support/stalled_readers.ts";

const STALLED = 3;

/** The value of the gauge `name` on `/metrics`. */
async function gauge(server: RunningServer, name: string): Promise<number> {
  const text = await (await fetch(`${server.url}metrics`)).text();
  const value = text.match(new RegExp(`^${name} (\\d+)$`, "m"))?.[1];
  assert.ok(value !== undefined, `no ${name} in /metrics`);
  return Number(value);
}

/** What `GET /events` from `address` is answered. */
async function statusFrom(
  server: RunningServer,
  address: string,
): Promise<number> {
  using client = Deno.createHttpClient({ localAddress: address });
  const res = await fetch(`${server.url}events`, { client });
  await res.body?.cancel();
  return res.status;
}

for (const webSocket of [false, true]) {
  const transport = webSocket ? "WebSocket" : "event stream";
  const address = webSocket ? "127.0.0.22" : "127.0.0.21";
  Deno.test(`${transport}s cut for not reading keep their client's places until it closes them: the next stream from it is 429 meanwhile`, async () => {
    const server = await startServer([
      "--quiet",
      `--max-streams-per-client=${STALLED}`,
    ]);
    try {
      const port = Number(new URL(server.url).port);
      const token = (await (await fetch(`${server.url}users`, {
        method: "POST",
        body: "ann",
      })).json()).token;
      const stalled = await stallReaders({
        port,
        address,
        path: "/events",
        count: STALLED,
        webSocket,
      });
      let opened = false;
      // Python has sent the requests; the server answers them in its time.
      for (let i = 0; i < 200 && !opened; i++) {
        opened = await gauge(server, "lms_event_streams_open") === STALLED;
        if (!opened) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(opened, "the stalled streams opened");
      const big = JSON.stringify({ text: "x".repeat(60_000) });
      // Posted until every stalled stream is cut: past what the kernel's
      // buffers absorb on loopback (a few MB each) and the 1 MiB bound.
      let cut = false;
      for (let i = 0; i < 1000 && !cut; i++) {
        const posted = await fetch(server.url, {
          method: "POST",
          headers: { "x-messaging-token": token },
          body: big,
        });
        assert.equal(posted.status, 200);
        if (i % 20 === 19) {
          cut = await gauge(server, "lms_event_streams_open") === 0;
        }
      }
      assert.ok(cut, "the stalled streams were cut");
      assert.equal(
        await gauge(server, "lms_event_stream_connections_closing"),
        STALLED,
      );
      assert.equal(await statusFrom(server, address), 429);
      assert.equal(await statusFrom(server, "127.0.0.23"), 200);
      assert.equal(
        await gauge(server, "lms_event_stream_connections_closing"),
        STALLED,
        "the stalled connections are still open",
      );
      await stalled.close();
      let status = 429;
      // The server learns of the closes as its next writes fail.
      for (let i = 0; i < 200 && status === 429; i++) {
        await new Promise((r) => setTimeout(r, 50));
        status = await statusFrom(server, address);
      }
      assert.equal(status, 200);
      assert.equal(
        await gauge(server, "lms_event_stream_connections_closing"),
        0,
      );
    } finally {
      await server.stop();
    }
    assert.doesNotMatch(server.stderr(), /fault/);
  });
}
