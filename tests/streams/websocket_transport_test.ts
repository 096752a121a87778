/**
 * The WebSocket transport before its socket opens: frames wait, then go out
 * in order; a socket ended meanwhile is closed as it opens; one that does not
 * open in time (Deno sent its 101, then nothing) is given up.
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

function transport(openWithinMs = 60_000) {
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

const frame = (text: string) =>
  new StreamEvent("message", JSON.stringify(text));

Deno.test("a socket gets the frames written before it opened, in order, and the reader is not gone", () => {
  const { socket, t, gone } = transport();
  const [a, b] = [frame("a"), frame("b")];
  t.send(a);
  t.send(b);
  assert.equal(socket.sent.length, 0);
  socket.open();
  assert.deepEqual(socket.sent, [a.frame, b.frame]);
  assert.equal(t.queuedBytes, 0);
  assert.equal(gone(), 0);
  assert.deepEqual(socket.closed, []);
});

Deno.test("a stream ended before its socket opens sends nothing and closes the socket as it opens, with the end's code", () => {
  const { socket, t } = transport();
  t.send(frame("a".repeat(1000)));
  assert.ok(t.queuedBytes >= 1000);
  t.close("overflow");
  assert.equal(t.queuedBytes, 0);
  assert.deepEqual(socket.closed, []);
  socket.open();
  assert.deepEqual(socket.sent, []);
  assert.deepEqual(socket.closed, [1013]);
});

Deno.test("a socket that opens in time is not given up, however late the beat", () => {
  const { socket, t, gone } = transport(30);
  socket.open();
  t.beat(performance.now() + 60_000);
  assert.equal(gone(), 0);
  assert.deepEqual(socket.closed, []);
});

Deno.test("a socket that does not open in time is gone at the next beat, holds nothing, and is closed with 1001 if it opens later", () => {
  const { socket, t, gone } = transport(20);
  t.send(frame("a".repeat(1000)));
  assert.ok(t.queuedBytes >= 1000);
  t.beat(performance.now());
  assert.equal(gone(), 0, "not before its time");
  t.beat(performance.now() + 21);
  assert.equal(gone(), 1);
  assert.equal(t.queuedBytes, 0);
  t.beat(performance.now() + 60_000);
  assert.equal(gone(), 1, "given up once");
  socket.open();
  assert.deepEqual(socket.sent, []);
  assert.deepEqual(socket.closed, [1001]);
});

Deno.test("a socket that closes or fails before opening is not given up a second time", () => {
  for (const ending of ["close", "error"]) {
    const { socket, t, gone } = transport(20);
    socket.readyState = WebSocket.CLOSED;
    socket.dispatchEvent(new Event(ending));
    t.beat(performance.now() + 60_000);
    assert.equal(gone(), 1, ending);
  }
});
