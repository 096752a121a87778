/**
 * The readers for `deno task bench:streams`, in a process of their own: holds
 * N event streams or N WebSockets open, both over raw sockets (lighter than
 * `fetch` or Deno's `WebSocket` client, which at 10,000 sockets made this
 * process, not the server, the slowest part: see
 * bench/results/profiles/streams.md), prints `ready` once every stream is
 * open, then for each message id notes when the last of the N streams
 * received it, and prints those times (ms since the epoch, sub-millisecond)
 * with the count of pings answered as JSON when told to stop on stdin.
 *
 * Imported, it is the parser both transports share: {@linkcode streamParser}
 * reads an answer's head and then the events or frames of one stream, from
 * whatever socket the caller holds (`bench/scale_readers.ts` holds them with
 * `node:net`, to choose each socket's source address).
 * @module
 */

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** The two ways to follow `/events`. */
export type Transport = "sse" | "websocket";

/** What a stream's parser tells its holder. */
export interface StreamSink {
  /** Message `id` arrived at `at` (ms since the epoch). */
  saw(id: number, at: number): void;
  /** Sends bytes back (a WebSocket's pong or close). */
  write(bytes: Uint8Array): void;
  /** The server sent a WebSocket ping (answered already). */
  pinged?(): void;
  /** The server said `missed` messages are gone (`event: gap`). */
  gap?(missed: number): void;
  /** The server closed a WebSocket with `code` (1005: no code given). */
  closed?(code: number): void;
}

/**
 * How one transport reads what follows the answer's head: given the bytes
 * not yet used (the tail of an unfinished event or frame first), it counts
 * the ids seen at `at` and returns the bytes to keep for the next read, or
 * `null` when the server ended the stream.
 */
type Parse = (
  sink: StreamSink,
  bytes: Uint8Array,
  at: number,
) => Uint8Array | null;

/**
 * Server-sent events: an id line split between two reads is found by
 * keeping what follows the last line break (the break included), which no
 * id already counted ends after.
 */
const parseEvents: Parse = (sink, bytes, at) => {
  const text = decoder.decode(bytes);
  for (const match of text.matchAll(/\nid: (\d+)\n/g)) {
    sink.saw(Number(match[1]), at);
  }
  if (sink.gap) {
    for (const match of text.matchAll(/\ndata: \{"missed":(\d+)\}\n/g)) {
      sink.gap(Number(match[1]));
    }
  }
  const lastBreak = bytes.lastIndexOf(10);
  return lastBreak === -1 ? new Uint8Array(0) : bytes.slice(lastBreak);
};

const CONTINUATION = 0x0, TEXT = 0x1, CLOSE = 0x8, PING = 0x9, PONG = 0xa;
/** FIN set; a client's frames are masked (RFC 6455 §5.3), here with a zero key, which leaves the payload as it is. */
const clientFrame = (opcode: number, payload: Uint8Array) =>
  Uint8Array.of(0x80 | opcode, 0x80 | payload.length, 0, 0, 0, 0, ...payload);

/** Counts the id (or the gap) of one text frame. */
function sawFrame(sink: StreamSink, payload: Uint8Array, at: number): void {
  const text = decoder.decode(payload);
  const id = /"id":(\d+)/.exec(text)?.[1];
  if (id !== undefined) sink.saw(Number(id), at);
  const missed = /^\{"event":"gap","data":\{"missed":(\d+)/.exec(text)?.[1];
  if (missed !== undefined) sink.gap?.(Number(missed));
}

/**
 * WebSocket frames from the server: unmasked, each event one text frame
 * (`{"event":…,"id":N,…}`); pings are answered with a pong, as a browser
 * would, and a close frame is answered and ends the reader.
 */
const parseFrames: Parse = (sink, bytes, at) => {
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
      sawFrame(sink, payload, at);
    } else if (opcode === PING) {
      sink.pinged?.();
      sink.write(clientFrame(PONG, payload));
    } else if (opcode === CLOSE) {
      sink.closed?.(
        payload.length >= 2 ? (payload[0]! << 8) | payload[1]! : 1005,
      );
      sink.write(clientFrame(CLOSE, payload));
      return null;
    }
  }
  return bytes.slice(offset);
};

/** The request that opens a stream, resuming after `lastEventId` if given. */
export function streamRequest(
  transport: Transport,
  lastEventId?: number,
): Uint8Array {
  const path = lastEventId === undefined
    ? "/events"
    : `/events?lastEventId=${lastEventId}`;
  // The key is not checked here: the answer's status says the upgrade
  // was taken, and a fixed key costs nothing per socket.
  const upgrade = transport === "websocket"
    ? "Upgrade: websocket\r\nConnection: Upgrade\r\n" +
      "Sec-WebSocket-Version: 13\r\n" +
      "Sec-WebSocket-Key: YmVuY2ggc3RyZWFtcyBrZXk=\r\n"
    : "";
  return encoder.encode(
    `GET ${path} HTTP/1.1\r\nHost: bench\r\n${upgrade}\r\n`,
  );
}

const READERS = {
  sse: { status: "HTTP/1.1 200 ", parse: parseEvents },
  websocket: { status: "HTTP/1.1 101 ", parse: parseFrames },
};
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

/**
 * Where a stream stands after a read: its head is still coming, it is
 * open, it was refused (`head` holds the answer's head: its status line,
 * `Retry-After`), or the server ended it.
 */
export type StreamState =
  | { state: "head" }
  | { state: "open"; opened: boolean }
  | { state: "refused"; head: string }
  | { state: "ended" };

/**
 * The parser of one stream: fed each read (a copy is not needed: what is
 * kept is copied), it says where the stream stands; `opened` is true on the
 * read that took the stream's head.
 */
export function streamParser(
  transport: Transport,
  sink: StreamSink,
): (chunk: Uint8Array, at: number) => StreamState {
  const reader = READERS[transport];
  let kept: Uint8Array = new Uint8Array(0);
  let inHead = true;
  return (chunk, at) => {
    let bytes = concat(kept, chunk);
    let opened = false;
    if (inHead) {
      const end = endOfHead(bytes);
      if (end === -1 && bytes.length < MAX_HEAD) {
        kept = bytes.slice();
        return { state: "head" };
      }
      const head = decoder.decode(bytes.subarray(0, Math.max(end, 0)));
      // A refusal (503 past --max-streams, 429 past the per-client cap) is
      // an answer too, but no stream.
      if (!head.startsWith(reader.status)) return { state: "refused", head };
      inHead = false;
      opened = true;
      bytes = bytes.subarray(end);
    }
    const rest = reader.parse(sink, bytes, at);
    if (rest === null) return { state: "ended" };
    kept = rest;
    return { state: "open", opened };
  };
}

const now = () => performance.timeOrigin + performance.now();

/** The bench:streams script: N streams over `Deno.connect`. */
async function main(): Promise<void> {
  const [addresses = "", countText, transportText = "sse"] = Deno.args;
  const targets = addresses.split(",");
  const count = Number(countText);
  const transport: Transport = transportText === "websocket"
    ? "websocket"
    : "sse";
  const seen = new Map<number, number>();
  const lastSeen = new Map<number, number>();
  let opened = 0;
  let pings = 0;
  /** The status line of the first stream refused, if any was. */
  let refused: string | undefined;
  const conns: Deno.TcpConn[] = [];

  async function hold(address: string): Promise<void> {
    const [hostname, port] = address.split(":");
    const conn = await Deno.connect({ hostname, port: Number(port) });
    conns.push(conn);
    await conn.write(streamRequest(transport));
    const parse = streamParser(transport, {
      saw(id, at) {
        const total = (seen.get(id) ?? 0) + 1;
        seen.set(id, total);
        if (total === count) lastSeen.set(id, at);
      },
      write: (bytes) => void conn.write(bytes).catch(() => {}),
      pinged: () => void pings++,
    });
    const buffer = new Uint8Array(4096);
    // Ends with the connection: every read either gets bytes or ends it.
    for (
      let n = await conn.read(buffer);
      n !== null;
      n = await conn.read(buffer)
    ) {
      const result = parse(buffer.subarray(0, n), now());
      if (result.state === "refused") {
        refused ??= result.head.slice(0, result.head.indexOf("\r\n")) ||
          "no answer";
        return;
      }
      if (result.state === "ended") return;
      if (result.state === "open" && result.opened) opened++;
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
  console.log(
    JSON.stringify({ lastSeen: Object.fromEntries(lastSeen), pings }),
  );
  for (const conn of conns) {
    try {
      conn.close();
    } catch {
      // Already closed.
    }
  }
  Deno.exit(0);
}

if (import.meta.main) await main();
