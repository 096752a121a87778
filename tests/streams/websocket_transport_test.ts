/**
 * The WebSocket transport before its socket opens: frames wait, and a socket
 * that never opens (Deno sent its 101, then nothing) is given up.
 */
import assert from "node:assert/strict";
import { StreamBudget } from "../../src/streams/stream_budget.ts";
import { StreamEvent } from "../../src/streams/event_stream_format.ts";
import { WebSocketTransport } from "../../src/streams/websocket_transport.ts";

/** What the transport uses of a server socket, still connecting. */
class Connecting extends EventTarget {
  readyState: number = WebSocket.CONNECTING;
  bufferedAmount = 0;
  sent: string[] = [];
  closed: number[] = [];
  send(frame: string) {
    this.sent.push(frame);
  }
  close(code: number) {
    this.closed.push(code);
  }
  open() {
    this.readyState = WebSocket.OPEN;
    this.dispatchEvent(new Event("open"));
  }
}

function transport(openWithinMs: number) {
  const socket = new Connecting();
  const budget = new StreamBudget(1_000_000);
  let gone = 0;
  const share = budget.share(() => 0, () => {});
  const t = new WebSocketTransport(
    socket as unknown as WebSocket,
    () => gone++,
    share,
    openWithinMs,
  );
  return { socket, t, gone: () => gone };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const frame = (text: string) =>
  new StreamEvent("message", JSON.stringify(text));

Deno.test("a socket that opens in time gets the frames written meanwhile, in order, and is not given up", async () => {
  const { socket, t, gone } = transport(30);
  const [a, b] = [frame("a"), frame("b")];
  t.send(a);
  t.send(b);
  assert.equal(socket.sent.length, 0);
  socket.open();
  assert.deepEqual(socket.sent, [a.frame, b.frame]);
  await sleep(60);
  assert.equal(gone(), 0);
  assert.deepEqual(socket.closed, []);
});

Deno.test("a socket that does not open in time is gone, holds nothing, and is closed with 1001 if it opens later", async () => {
  const { socket, t, gone } = transport(20);
  t.send(frame("a".repeat(1000)));
  assert.ok(t.queuedBytes >= 1000);
  await sleep(60);
  assert.equal(gone(), 1);
  assert.equal(t.queuedBytes, 0);
  socket.open();
  assert.deepEqual(socket.sent, []);
  assert.deepEqual(socket.closed, [1001]);
});

Deno.test("a socket that closes or fails before opening is not given up a second time", async () => {
  for (const ending of ["close", "error"]) {
    const { socket, gone } = transport(20);
    socket.dispatchEvent(new Event(ending));
    await sleep(60);
    assert.equal(gone(), 1, ending);
  }
});
