/**
 * The streams' WebSocket transport over real sockets: Deno's client, a
 * bare TCP client that never answers a ping, and Node's own WebSocket.
 */
import assert from "node:assert/strict";
import { postMessage, register } from "../_support/over_http.ts";
import { utf8Header } from "../_support/call.ts";
import { readEvents } from "../_support/event_reader.ts";
import { type RunningServer, startServer } from "../_support/program.ts";
import {
  openSocket,
  rawUpgrade,
  type SocketReader,
} from "../_support/socket_reader.ts";

/** Runs `fn` against a fresh program started with `args`, then stops it. */
async function withServer(
  args: string[],
  fn: (server: RunningServer) => Promise<void>,
): Promise<void> {
  const server = await startServer(["--quiet", ...args]);
  try {
    await fn(server);
  } finally {
    await server.stop();
  }
}

const message = (id: number, text: string, user = "ann") => ({
  event: "message",
  id,
  data: { text, color: "black", user },
});

Deno.test("WebSocket: catch-up, resume by query or header (the header wins), gap, then live, each message once in id order", async () => {
  await withServer(["--history=5"], async ({ url }) => {
    const token = await register(url, "ann");
    for (let i = 1; i <= 7; i++) await postMessage(url, token, `m${i}`);
    const retained = [3, 4, 5, 6, 7].map((id) => message(id, `m${id}`));
    const fresh = await openSocket(`${url}events`);
    assert.deepEqual(await fresh.frames(5), retained);
    const resumed = await openSocket(`${url}events?lastEventId=6`);
    assert.deepEqual(await resumed.frames(1), [message(7, "m7")]);
    const gapped = await openSocket(`${url}events?lastEventId=1`);
    assert.deepEqual(await gapped.frames(6), [
      { event: "gap", data: { missed: 1 } },
      ...retained,
    ]);
    const header = await openSocket(`${url}events?lastEventId=1`, {
      "last-event-id": "7",
    });
    await postMessage(url, token, "m8");
    await postMessage(url, token, "m9");
    for (const reader of [fresh, resumed, gapped, header]) {
      assert.deepEqual(await reader.frames(2), [
        message(8, "m8"),
        message(9, "m9"),
      ]);
      reader.close();
    }
    // The event stream reads the query the same way.
    const sse = await fetch(`${url}events?lastEventId=8`);
    const events = readEvents(sse.body!);
    assert.deepEqual((await events.events(1)).map((e) => e.id), ["9"]);
    await events.close();
  });
});

Deno.test("WebSocket: the quote stream sends the quote, then each replacement, as quote frames", async () => {
  await withServer([], async ({ url }) => {
    const reader = await openSocket(`${url}quote/events`);
    const [first] = await reader.frames(1);
    assert.equal(first?.event, "quote");
    assert.equal(typeof first?.data, "string");
    const posted = await fetch(`${url}quote`, {
      method: "POST",
      body: "Line one\nand two.",
    });
    assert.equal(posted.status, 200);
    await posted.body?.cancel();
    assert.deepEqual(await reader.frames(1), [
      { event: "quote", data: "Line one\nand two." },
    ]);
    reader.close();
  });
});

Deno.test("WebSocket: a token frame makes its user online while the socket is open; presence frames reach the message stream's sockets", async () => {
  await withServer([], async ({ url }) => {
    const ann = await register(url, "ann");
    const bob = await register(url, "Иван");
    const watcher = await openSocket(`${url}events`);
    const online = async () =>
      (await (await fetch(`${url}users/online`, {
        headers: { "x-messaging-token": utf8Header(ann) },
      })).json()).online;
    const own = await openSocket(`${url}events`);
    // The name is sent as text: no header encoding to get wrong.
    own.socket.send(JSON.stringify({ token: bob }));
    assert.deepEqual(await watcher.frames(1), [
      { event: "presence", data: { name: "Иван", online: true } },
    ]);
    assert.deepEqual(await online(), ["Иван"]);
    own.close();
    assert.deepEqual(await watcher.frames(1), [
      { event: "presence", data: { name: "Иван", online: false } },
    ]);
    assert.deepEqual(await online(), []);
    const gone = await fetch(`${url}users`, {
      method: "DELETE",
      headers: { "x-messaging-token": utf8Header(bob) },
    });
    assert.equal(gone.status, 200);
    await gone.body?.cancel();
    assert.deepEqual(await watcher.frames(1), [
      { event: "presence", data: { name: "Иван", registered: false } },
    ]);
    watcher.close();
  });
});

Deno.test("WebSocket: a bad token closes with 1008, any other client frame with 1003", async () => {
  await withServer([], async ({ url }) => {
    const ann = await register(url, "ann");
    const cases: [string, (reader: SocketReader) => void, number][] = [
      ["wrong token", (r) => r.socket.send('{"token":"ann-00"}'), 1008],
      ["no dash", (r) => r.socket.send('{"token":"ann"}'), 1008],
      ["unknown user", (r) => r.socket.send('{"token":"zed-00"}'), 1008],
      ["not JSON", (r) => r.socket.send("hello"), 1003],
      ["other JSON", (r) => r.socket.send('{"token":"x","more":1}'), 1003],
      ["binary", (r) => r.socket.send(new Uint8Array([1, 2])), 1003],
      ["a second token", (r) => {
        r.socket.send(JSON.stringify({ token: ann }));
        r.socket.send(JSON.stringify({ token: ann }));
      }, 1003],
    ];
    for (const path of ["events", "quote/events"]) {
      for (const [what, send, code] of cases) {
        const reader = await openSocket(`${url}${path}`);
        send(reader);
        assert.equal(await reader.closed(), code, `${path}: ${what}`);
      }
    }
  });
});

Deno.test("WebSocket: a browser's upgrade from a foreign origin is refused 403; its own origin (any scheme) and --cors-origin are let in", async () => {
  await withServer(["--cors-origin=https://app.example"], async ({ url }) => {
    const own = new URL(url);
    const cases: [string, number][] = [
      ["https://evil.example", 403],
      ["null", 403],
      [`http://${own.host}`, 101],
      [`https://${own.host}`, 101],
      ["https://app.example", 101],
    ];
    for (const path of ["events", "quote/events"]) {
      for (const [origin, status] of cases) {
        const answer = await rawUpgrade(`${url}${path}`, { Origin: origin });
        answer.conn.close();
        assert.equal(answer.status, status, `${path} from ${origin}`);
        if (status === 403) {
          assert.match(answer.head, /content-type: application\/json/i);
          assert.deepEqual(
            JSON.parse(new TextDecoder().decode(answer.rest)),
            { status: 403, message: "Forbidden" },
          );
        }
      }
    }
  });
});

Deno.test("WebSocket and event streams count together against both caps: 429 past a client's share, 503 past the process's", async () => {
  const args = [
    "--trust-proxy",
    "--max-streams=3",
    "--max-streams-per-client=2",
  ];
  await withServer(args, async ({ url }) => {
    const from = (address: string) => ({ "x-forwarded-for": address });
    const sse = await fetch(`${url}events`, { headers: from("192.0.2.1") });
    assert.equal(sse.status, 200);
    const socket = await openSocket(`${url}quote/events`, from("192.0.2.1"));
    await socket.frames(1);
    /** Asserts that `address` is refused `status` over both transports. */
    const refusedBothWays = async (address: string, status: number) => {
      const upgrade = await rawUpgrade(`${url}events`, from(address));
      upgrade.conn.close();
      assert.equal(upgrade.status, status, `an upgrade from ${address}`);
      const stream = await fetch(`${url}events`, { headers: from(address) });
      await stream.body?.cancel();
      assert.equal(stream.status, status, `an event stream from ${address}`);
    };
    await refusedBothWays("192.0.2.1", 429);
    const other = await openSocket(`${url}events`, from("192.0.2.2"));
    await refusedBothWays("192.0.2.3", 503);
    await sse.body?.cancel();
    socket.close();
    other.close();
  });
});

Deno.test("WebSocket: SIGTERM closes every socket with 1001, and the program exits 0", async () => {
  const server = await startServer(["--quiet"]);
  const readers = await Promise.all(
    ["events", "quote/events", "events"].map((path) =>
      openSocket(`${server.url}${path}`)
    ),
  );
  await readers[1]!.frames(1);
  assert.equal(await server.stop("SIGTERM"), 0, server.stderr());
  for (const reader of readers) assert.equal(await reader.closed(), 1001);
});

/** The opcodes and close code of the frames in `bytes` (server frames: unmasked, short). */
function framesOf(
  bytes: Uint8Array,
): { opcodes: number[]; closeCode?: number } {
  const opcodes: number[] = [];
  let closeCode: number | undefined;
  for (let at = 0; at + 2 <= bytes.length && opcodes.length < 1000;) {
    const opcode = bytes[at]! & 0x0f;
    let length = bytes[at + 1]! & 0x7f;
    let start = at + 2;
    if (length === 126) {
      length = (bytes[at + 2]! << 8) | bytes[at + 3]!;
      start += 2;
    }
    if (start + length > bytes.length) break;
    opcodes.push(opcode);
    if (opcode === 0x8 && length >= 2) {
      closeCode = (bytes[start]! << 8) | bytes[start + 1]!;
    }
    at = start + length;
  }
  return { opcodes, closeCode };
}

Deno.test("WebSocket: a quiet socket gets a ping; one whose pong never comes is closed, while a client that answers stays open", async () => {
  await withServer(["--heartbeat-ms=100"], async ({ url }) => {
    const answering = await openSocket(`${url}quote/events`);
    const silent = await rawUpgrade(`${url}quote/events`);
    assert.equal(silent.status, 101);
    let bytes = silent.rest;
    const buffer = new Uint8Array(4096);
    for (let i = 0; i < 100 && framesOf(bytes).closeCode === undefined; i++) {
      const n = await silent.conn.read(buffer);
      if (n === null) break;
      bytes = new Uint8Array([...bytes, ...buffer.subarray(0, n)]);
    }
    silent.conn.close();
    const { opcodes, closeCode } = framesOf(bytes);
    // The quote (text), a ping, then the close: no pong came.
    assert.deepEqual(opcodes, [0x1, 0x9, 0x8]);
    assert.equal(closeCode, 1001);
    assert.equal(answering.socket.readyState, WebSocket.OPEN);
    answering.close();
  });
});

Deno.test("WebSocket: Node's own WebSocket client reads the frames (a third-party client)", async () => {
  await withServer([], async ({ url }) => {
    const token = await register(url, "ann");
    for (let i = 1; i <= 2; i++) await postMessage(url, token, `m${i}`);
    const script = `
      const ws = new WebSocket(process.argv[1]);
      const got = [];
      ws.onmessage = (e) => {
        got.push(JSON.parse(e.data));
        if (got.length === 2) { console.log(JSON.stringify(got)); ws.close(); }
      };
      ws.onerror = () => process.exit(3);
      setTimeout(() => process.exit(4), 10000);
      ws.onclose = () => process.exit(0);
    `;
    const version = Number(
      new TextDecoder().decode(
        (await new Deno.Command("node", { args: ["--version"] }).output())
          .stdout,
      ).replace(/^v(\d+).*\s*$/, "$1"),
    );
    // Node 22 has WebSocket by default; Node 20 and 21 behind a flag.
    const flags = version >= 22 ? [] : ["--experimental-websocket"];
    const { code, stdout, stderr } = await new Deno.Command("node", {
      args: [...flags, "-e", script, `${url.replace(/^http/, "ws")}events`],
    }).output();
    assert.equal(code, 0, new TextDecoder().decode(stderr));
    assert.deepEqual(JSON.parse(new TextDecoder().decode(stdout)), [
      message(1, "m1"),
      message(2, "m2"),
    ]);
  });
});

Deno.test("a catch-up far over the bound for one reader (75 messages of 60 KB) opens whole on both transports, with the default limits", async () => {
  await withServer(["--history=100"], async ({ url }) => {
    const token = await register(url, "ann");
    const text = (id: number) => `${id % 10}`.repeat(60_000);
    for (let id = 1; id <= 80; id++) await postMessage(url, token, text(id));
    const expected = Array.from({ length: 75 }, (_, i) => i + 6);
    const socket = await openSocket(`${url}events?lastEventId=5`);
    const frames = await socket.frames(75);
    assert.deepEqual(frames.map((frame) => frame.id), expected);
    const res = await fetch(`${url}events?lastEventId=5`);
    assert.equal(res.status, 200, "the event stream opens");
    const events = readEvents(res.body!);
    const sent = (await events.events(75)).map((event) => Number(event.id));
    assert.deepEqual(sent, expected);
    await events.close();
  });
});

Deno.test("WebSockets past --max-websockets-per-client are refused 429 with Retry-After, while the client's event streams and other clients go on", async () => {
  const args = ["--trust-proxy", "--max-websockets-per-client=2"];
  await withServer(args, async ({ url }) => {
    const from = (address: string) => ({ "x-forwarded-for": address });
    const open = [
      await openSocket(`${url}events`, from("192.0.2.1")),
      await openSocket(`${url}quote/events`, from("192.0.2.1")),
    ];
    for (const path of ["events", "quote/events"]) {
      const refused = await rawUpgrade(`${url}${path}`, from("192.0.2.1"));
      refused.conn.close();
      assert.equal(refused.status, 429, path);
      assert.match(refused.head, /retry-after: 5/i);
      assert.match(
        JSON.parse(new TextDecoder().decode(refused.rest)).errors[0]
          .description,
        /Too many WebSockets/,
      );
    }
    const sse = await fetch(`${url}events`, { headers: from("192.0.2.1") });
    assert.equal(sse.status, 200);
    await sse.body?.cancel();
    const other = await openSocket(`${url}events`, from("192.0.2.2"));
    // A place frees as a socket closes.
    open[0]!.close();
    await open[0]!.closed();
    let again: Awaited<ReturnType<typeof rawUpgrade>> | undefined;
    for (let i = 0; i < 50 && again?.status !== 101; i++) {
      again?.conn.close();
      if (i > 0) await new Promise((r) => setTimeout(r, 20));
      again = await rawUpgrade(`${url}events`, from("192.0.2.1"));
    }
    again?.conn.close();
    assert.equal(again?.status, 101);
    open[1]!.close();
    other.close();
  });
});

Deno.test("--websocket=off refuses every upgrade with 400 in JSON, and event streams still open", async () => {
  await withServer(["--websocket=off"], async ({ url }) => {
    for (const path of ["events", "quote/events"]) {
      const refused = await rawUpgrade(`${url}${path}`);
      refused.conn.close();
      assert.equal(refused.status, 400, path);
      const body = JSON.parse(new TextDecoder().decode(refused.rest));
      assert.equal(body.errors[0].name, "upgrade");
      assert.match(body.errors[0].description, /turned off/);
      const sse = await fetch(`${url}${path}`);
      assert.equal(sse.status, 200);
      await sse.body?.cancel();
    }
  });
});

Deno.test("DELETE /users ends the user's own streams: its WebSockets close with 1008, its event stream ends after registered:false; others stay", async () => {
  await withServer([], async ({ url }) => {
    const ann = await register(url, "ann");
    const bob = await register(url, "bob");
    const byFrame = await openSocket(`${url}events`);
    byFrame.socket.send(JSON.stringify({ token: ann }));
    const byHeader = await openSocket(`${url}events`, {
      "x-messaging-token": utf8Header(ann),
    });
    const sse = await fetch(`${url}events`, {
      headers: { "x-messaging-token": utf8Header(ann) },
    });
    const events = readEvents(sse.body!);
    const bobs = await openSocket(`${url}events`);
    bobs.socket.send(JSON.stringify({ token: bob }));
    const anonymous = await openSocket(`${url}events`);
    // Ann is online (one presence event) before she leaves.
    const online = await fetch(`${url}users/online`, {
      headers: { "x-messaging-token": utf8Header(bob) },
    });
    assert.deepEqual((await online.json()).online.sort(), ["ann", "bob"]);
    const gone = await fetch(url + "users", {
      method: "DELETE",
      headers: { "x-messaging-token": utf8Header(ann) },
    });
    assert.equal(gone.status, 200);
    await gone.body?.cancel();
    assert.equal(await byFrame.closed(), 1008);
    assert.equal(await byHeader.closed(), 1008);
    const seen: unknown[] = [];
    for (
      let item = await events.next();
      item !== null;
      item = await events.next()
    ) {
      if (item.type === "event" && item.event === "presence") {
        seen.push(JSON.parse(item.data));
      }
    }
    assert.deepEqual(seen.at(-1), { name: "ann", registered: false });
    // Bob's socket and the anonymous one hear it and stay open.
    await postMessage(url, bob, "still here");
    for (const reader of [bobs, anonymous]) {
      const frames = [];
      for (let i = 0; i < 10; i++) {
        const [frame] = await reader.frames(1);
        frames.push(frame);
        if (frame?.event === "message") break;
      }
      assert.deepEqual(frames.at(-1), message(1, "still here", "bob"));
      assert.ok(
        frames.some((f) =>
          JSON.stringify(f?.data) === '{"name":"ann","registered":false}'
        ),
      );
      reader.close();
    }
  });
});

Deno.test("an event stream ended by unregistering ends cleanly after its last event: no reader sees a cut-off body", async () => {
  await withServer([], async ({ url }) => {
    const ann = await register(url, "ann");
    const res = await fetch(`${url}events`, {
      headers: { "x-messaging-token": utf8Header(ann) },
    });
    const body = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = (await body.read()).value ?? "";
    const gone = await fetch(`${url}users`, {
      method: "DELETE",
      headers: { "x-messaging-token": utf8Header(ann) },
    });
    await gone.body?.cancel();
    // A cut-off body makes read() throw; a clean end answers done.
    for (let i = 0; i < 100; i++) {
      const { done, value } = await body.read();
      if (done) break;
      text += value;
    }
    assert.match(text, /data: \{"name":"ann","registered":false\}\n\n$/);
  });
});

/** Sends an upgrade to `url`'s /events (as `token`'s user, given one), then resets the connection at once (SO_LINGER 0): a client whose network died mid-handshake. */
async function resetHandshakes(
  url: string,
  count: number,
  token = "",
): Promise<void> {
  const { hostname, port } = new URL(url);
  const as = token === "" ? "" : `X-Messaging-Token: ${token}\\r\\n`;
  const script = `
import base64, os, socket, struct, sys
for _ in range(${count}):
    s = socket.create_connection(("${hostname}", ${port}))
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET /events HTTP/1.1\\r\\nHost: x\\r\\nUpgrade: websocket\\r\\n"
               "Connection: Upgrade\\r\\nSec-WebSocket-Key: %s\\r\\n"
               "Sec-WebSocket-Version: 13\\r\\n${as}\\r\\n" % key).encode())
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
`;
  const done = await new Deno.Command("python3", { args: ["-c", script] })
    .output();
  assert.ok(done.success, new TextDecoder().decode(done.stderr));
}

async function streamsOpen(url: string): Promise<number> {
  const metrics = await (await fetch(`${url}metrics`)).text();
  return Number(/^lms_event_streams_open (\d+)$/m.exec(metrics)?.[1]);
}

Deno.test("WebSocket: an upgrade whose client reset the connection mid-handshake (Deno never opens nor closes it) gives its place back", async () => {
  await withServer(
    ["--heartbeat-ms=1000", "--max-websockets-per-client=100"],
    async ({ url }) => {
      // Deno leaks only some of them: the reset must beat its upgrade.
      let leaked = 0;
      for (let round = 0; round < 10 && leaked === 0; round++) {
        await resetHandshakes(url, 10);
        await new Promise((r) => setTimeout(r, 500));
        leaked = await streamsOpen(url);
      }
      assert.ok(leaked > 0, "no reset handshake was left hanging by Deno");
      // Its idle timeout at this heartbeat is 2 to 2.5 s; given up well after.
      let open = leaked;
      for (let i = 0; i < 60 && open > 0; i++) {
        await new Promise((r) => setTimeout(r, 500));
        open = await streamsOpen(url);
      }
      assert.equal(open, 0, `${leaked} hanging upgrades were never released`);
    },
  );
});

Deno.test("SIGTERM does not wait for an upgrade Deno never opened: the process exits long before its drain deadline", async () => {
  await withServer(
    ["--drain-timeout-ms=30000", "--max-websockets-per-client=100"],
    async (server) => {
      let leaked = 0;
      for (let round = 0; round < 10 && leaked === 0; round++) {
        await resetHandshakes(server.url, 10);
        await new Promise((r) => setTimeout(r, 500));
        leaked = await streamsOpen(server.url);
      }
      assert.ok(leaked > 0, "no reset handshake was left hanging by Deno");
      const signalled = performance.now();
      assert.equal(await server.stop("SIGTERM"), 0);
      const seconds = (performance.now() - signalled) / 1000;
      // Held by such a socket, it left only at the deadline: 31 s.
      assert.ok(seconds < 10, `exited ${seconds.toFixed(1)} s after SIGTERM`);
    },
  );
});

Deno.test("a user whose only WebSocket Deno never opened (the client reset the handshake) is not online", async () => {
  await withServer(["--max-websockets-per-client=100"], async ({ url }) => {
    const ann = await register(url, "ann");
    const bob = await register(url, "bob");
    let leaked = 0;
    for (let round = 0; round < 10 && leaked === 0; round++) {
      await resetHandshakes(url, 10, ann);
      await new Promise((r) => setTimeout(r, 500));
      leaked = await streamsOpen(url);
    }
    assert.ok(leaked > 0, "no reset handshake was left hanging by Deno");
    const online = await fetch(`${url}users/online`, {
      headers: { "x-messaging-token": utf8Header(bob) },
    });
    assert.deepEqual(await online.json(), { online: [] });
  });
});
