/** The event streams over real sockets, as `curl -N` and browsers use them. */
import assert from "node:assert/strict";
import { utf8Header } from "../_support/call.ts";
import { readEvents } from "../_support/event_reader.ts";
import { startServer } from "../_support/program.ts";

Deno.test("SIGTERM with streams open ends them and exits 0 at once, not at the drain deadline", async () => {
  const server = await startServer(["--quiet"]);
  const readers = await Promise.all(
    Array.from({ length: 20 }, async (_, i) => {
      const res = await fetch(`${server.url}${i % 2 ? "quote/" : ""}events`);
      assert.equal(res.status, 200);
      const reader = readEvents(res.body!);
      await reader.next();
      return reader;
    }),
  );
  const start = performance.now();
  assert.equal(await server.stop("SIGTERM"), 0, server.stderr());
  const elapsed = performance.now() - start;
  assert.ok(elapsed < 5000, `exited after ${elapsed.toFixed(0)} ms`);
  for (const reader of readers) {
    let item;
    do item = await reader.next(2000); while (item !== null);
  }
});

Deno.test("curl-style: a post on the wire reaches an open stream as one event with its id", async () => {
  const server = await startServer(["--quiet"]);
  try {
    const token = (await (await fetch(`${server.url}users`, {
      method: "POST",
      body: "zoë",
    })).json()).token;
    const res = await fetch(`${server.url}events`);
    assert.equal(
      res.headers.get("content-type"),
      "text/event-stream; charset=utf-8",
    );
    const reader = readEvents(res.body!);
    await reader.next();
    const posted = await fetch(server.url, {
      method: "POST",
      headers: {
        "x-messaging-token": utf8Header(token),
      },
      body: '{"text":"hello"}',
    });
    assert.equal(posted.status, 200);
    const event = await reader.event();
    assert.equal(event.id, "1");
    assert.deepEqual(JSON.parse(event.data), {
      text: "hello",
      color: "black",
      user: "zoë",
    });
    await reader.close();
  } finally {
    await server.stop();
  }
});

Deno.test("HEAD on a stream over the wire: its headers, no body, no content-length the stream lacks", async () => {
  const server = await startServer(["--quiet"]);
  try {
    for (const path of ["events", "quote/events"]) {
      const head = await fetch(`${server.url}${path}`, { method: "HEAD" });
      assert.equal(head.status, 200);
      assert.equal(
        head.headers.get("content-type"),
        "text/event-stream; charset=utf-8",
      );
      assert.equal(head.headers.get("content-length"), null);
      assert.equal(await head.text(), "");
    }
  } finally {
    await server.stop();
  }
});

Deno.test("a reader that never reads (small receive buffer) is cut off past 1 MiB, and the others go on", async () => {
  const server = await startServer(["--quiet"]);
  const port = new URL(server.url).port;
  // A socket that asks for the stream, then reads nothing until told to.
  const slow = new Deno.Command("python3", {
    args: [
      "-c",
      `
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", ${port}))
s.sendall(b"GET /events HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n")
print("open", flush=True)
sys.stdin.readline()
total = 0
try:
    while True:
        data = s.recv(65536)
        if not data:
            break
        total += len(data)
except OSError:
    pass
print(total, flush=True)
`,
    ],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const out = slow.stdout.pipeThrough(new TextDecoderStream()).getReader();
  try {
    assert.match((await out.read()).value ?? "", /open/);
    const token = (await (await fetch(`${server.url}users`, {
      method: "POST",
      body: "ann",
    })).json()).token;
    const res = await fetch(`${server.url}events`);
    const reader = readEvents(res.body!);
    await reader.next();
    const big = "x".repeat(60_000);
    // 200 events of 60 KB: 12 MB, well past what the kernel's socket
    // buffers absorb on loopback (up to 4 MB each way) plus 1 MiB.
    for (let i = 0; i < 200; i++) {
      const posted = await fetch(server.url, {
        method: "POST",
        headers: { "x-messaging-token": token },
        body: JSON.stringify({ text: big }),
      });
      assert.equal(posted.status, 200);
    }
    assert.equal(
      (await reader.events(60)).length,
      60,
      "the reading reader got all",
    );
    await reader.close();
    const writer = slow.stdin.getWriter();
    await writer.write(new TextEncoder().encode("read\n"));
    await writer.close();
    let text = "";
    for (;;) {
      const { done, value } = await out.read();
      if (done) break;
      text += value;
    }
    const received = Number(text.trim());
    assert.ok(
      received < 6_000_000,
      `the slow reader received ${received} of 12,000,000 bytes`,
    );
  } finally {
    await slow.status;
    await server.stop();
  }
  assert.doesNotMatch(server.stderr(), /fault/, "ending a stream is no fault");
});
