/**
 * The readers for `deno task bench:streams`, in a process of their own: holds
 * N event streams or N WebSockets open, both over raw sockets (lighter than
 * `fetch` or Deno's `WebSocket` client, which at 10,000 sockets made this
 * process, not the server, the slowest part: see
 * bench/results/profiles/streams.md), prints `ready` once every stream is
 * open, then for each message id notes when the last of the N streams
 * received it, and prints those times (ms since the epoch, sub-millisecond)
 * with the count of pings answered as JSON when told to stop on stdin.
 * @module
 */

const [addresses = "", countText, transport = "sse"] = Deno.args;
const targets = addresses.split(",");
const count = Number(countText);
const now = () => performance.timeOrigin + performance.now();

const seen = new Map<number, number>();
const lastSeen = new Map<number, number>();
let opened = 0;
let pings = 0;
/** The status line of the first stream refused, if any was. */
let refused: string | undefined;
const conns: Deno.TcpConn[] = [];
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Counts one reader's sight of message `id` at `at`. */
function saw(id: number, at: number): void {
  const total = (seen.get(id) ?? 0) + 1;
  seen.set(id, total);
  if (total === count) lastSeen.set(id, at);
}

/**
 * How one transport reads what follows the answer's head: given the bytes
 * not yet used (the tail of an unfinished event or frame first), it counts
 * the ids seen at `at` and returns the bytes to keep for the next read, or
 * `null` when the server ended the stream.
 */
type Parse = (
  conn: Deno.TcpConn,
  bytes: Uint8Array,
  at: number,
) => Promise<Uint8Array | null>;

/**
 * Server-sent events: an id line split between two reads is found by
 * keeping what follows the last line break (the break included), which no
 * id already counted ends after.
 */
const parseEvents: Parse = (_conn, bytes, at) => {
  const text = decoder.decode(bytes);
  for (const match of text.matchAll(/\nid: (\d+)\n/g)) {
    saw(Number(match[1]), at);
  }
  const lastBreak = bytes.lastIndexOf(10);
  return Promise.resolve(
    lastBreak === -1 ? new Uint8Array(0) : bytes.slice(lastBreak),
  );
};

const CONTINUATION = 0x0, TEXT = 0x1, CLOSE = 0x8, PING = 0x9, PONG = 0xa;
/** FIN set; a client's frames are masked (RFC 6455 §5.3), here with a zero key, which leaves the payload as it is. */
const clientFrame = (opcode: number, payload: Uint8Array) =>
  Uint8Array.of(0x80 | opcode, 0x80 | payload.length, 0, 0, 0, 0, ...payload);

/**
 * WebSocket frames from the server: unmasked, each event one text frame
 * (`{"event":…,"id":N,…}`); pings are answered with a pong, as a browser
 * would, and a close frame is answered and ends the reader.
 */
const parseFrames: Parse = async (conn, bytes, at) => {
  let offset = 0;
  // Each frame takes at least its two-byte head.
  while (offset + 2 <= bytes.length) {
    const opcode = bytes[offset]! & 0x0f;
    let length = bytes[offset + 1]! & 0x7f;
    let head = 2;
    if (length === 126) {
      head = 4;
      length = (bytes[offset + 2]! << 8) | bytes[offset + 3]!;
    } else if (length === 127) {
      head = 10;
      const view = new DataView(bytes.buffer, bytes.byteOffset + offset + 2);
      length = bytes.length >= offset + 10
        ? Number(view.getBigUint64(0))
        : Infinity;
    }
    if (offset + head + length > bytes.length) break;
    const payload = bytes.subarray(offset + head, offset + head + length);
    offset += head + length;
    if (opcode === TEXT || opcode === CONTINUATION) {
      const id = /"id":(\d+)/.exec(decoder.decode(payload))?.[1];
      if (id !== undefined) saw(Number(id), at);
    } else if (opcode === PING) {
      pings++;
      await conn.write(clientFrame(PONG, payload));
    } else if (opcode === CLOSE) {
      await conn.write(clientFrame(CLOSE, payload)).catch(() => {});
      return null;
    }
  }
  return bytes.slice(offset);
};

const READERS = {
  sse: {
    request: encoder.encode("GET /events HTTP/1.1\r\nHost: bench\r\n\r\n"),
    status: "HTTP/1.1 200 ",
    parse: parseEvents,
  },
  websocket: {
    // The key is not checked here: the answer's status says the upgrade
    // was taken, and a fixed key costs nothing per socket.
    request: encoder.encode(
      "GET /events HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\n" +
        "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n" +
        "Sec-WebSocket-Key: YmVuY2ggc3RyZWFtcyBrZXk=\r\n\r\n",
    ),
    status: "HTTP/1.1 101 ",
    parse: parseFrames,
  },
};
const reader = transport === "websocket" ? READERS.websocket : READERS.sse;
/** An answer's head longer than this is not one the servers send. */
const MAX_HEAD = 8192;

/** The index just past the blank line that ends an answer's head, or -1. */
function endOfHead(bytes: Uint8Array): number {
  for (let i = 3; i < bytes.length; i++) {
    if (
      bytes[i] === 10 && bytes[i - 1] === 13 && bytes[i - 2] === 10 &&
      bytes[i - 3] === 13
    ) return i + 1;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const both = new Uint8Array(a.length + b.length);
  both.set(a);
  both.set(b, a.length);
  return both;
}

async function hold(address: string): Promise<void> {
  const [hostname, port] = address.split(":");
  const conn = await Deno.connect({ hostname, port: Number(port) });
  conns.push(conn);
  await conn.write(reader.request);
  const buffer = new Uint8Array(4096);
  let kept: Uint8Array = new Uint8Array(0);
  let inHead = true;
  // Ends with the connection: every read either gets bytes or ends it.
  for (
    let n = await conn.read(buffer);
    n !== null;
    n = await conn.read(buffer)
  ) {
    const at = now();
    let bytes = concat(kept, buffer.slice(0, n));
    if (inHead) {
      const end = endOfHead(bytes);
      if (end === -1 && bytes.length < MAX_HEAD) {
        kept = bytes;
        continue;
      }
      const head = decoder.decode(bytes.subarray(0, Math.max(end, 0)));
      // A refusal (503 past --max-streams, 429 past the per-client cap) is
      // an answer too, but no stream.
      if (!head.startsWith(reader.status)) {
        refused ??= head.slice(0, head.indexOf("\r\n")) || "no answer";
        return;
      }
      inHead = false;
      opened++;
      bytes = bytes.subarray(end);
    }
    const rest = await reader.parse(conn, bytes, at);
    if (rest === null) return;
    kept = rest;
  }
}

/** Holds a reader until its connection ends or fails (a closed socket is a reader gone, counted by who waits for it). */
const holdQuietly = (address: string) => hold(address).catch(() => {});

// Open in batches so the listen queue is never overrun.
for (let i = 0; i < count; i += 200) {
  for (let j = 0; j < Math.min(200, count - i); j++) {
    const target = targets[(i + j) % targets.length];
    if (target !== undefined) holdQuietly(target);
  }
  await new Promise((resolve) => setTimeout(resolve, 20));
}
for (let tries = 0; opened < count && !refused && tries < 600; tries++) {
  await new Promise((resolve) => setTimeout(resolve, 50));
}
console.log(
  opened === count
    ? "ready"
    : `only ${opened} of ${count} opened${
      refused ? `; refused: ${refused}` : ""
    }`,
);
// Wait for the bench to say it is done.
for await (const _ of Deno.stdin.readable) break;
console.log(JSON.stringify({ lastSeen: Object.fromEntries(lastSeen), pings }));
for (const conn of conns) {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}
Deno.exit(0);
