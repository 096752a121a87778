/** Reads a stream's WebSocket the way a client does: each text frame one JSON event. */

/** One frame as the server sent it. */
export interface Frame {
  event: string;
  id?: number;
  data: unknown;
}

/** A reader of one WebSocket. */
export interface SocketReader {
  readonly socket: WebSocket;
  /** The next `count` frames; fails after `timeoutMs`, or when the socket closes first. */
  frames(count: number, timeoutMs?: number): Promise<Frame[]>;
  /** The close code, once the socket closed; fails after `timeoutMs`. */
  closed(timeoutMs?: number): Promise<number>;
  /** The close frame's reason, once the socket closed. */
  readonly reason: string | undefined;
  /** Closes the socket from the client's side. */
  close(): void;
}

/** Polls `ready` every few milliseconds until it answers, or fails after `timeoutMs`. */
async function until<T>(
  ready: () => T | undefined,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = ready();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not in time`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Opens `url` (an `http:` URL is turned into `ws:`) with `headers` (Deno's
 * client may send any, `Origin` too), through `client` when given (to
 * connect from another loopback address), and waits until it is open or
 * closed (refused).
 */
export async function openSocket(
  url: string,
  headers: Record<string, string> = {},
  client?: Deno.HttpClient,
): Promise<SocketReader> {
  const socket = new WebSocket(url.replace(/^http/, "ws"), {
    headers,
    client,
  });
  const frames: Frame[] = [];
  let code: number | undefined;
  let reason: string | undefined;
  socket.onmessage = (e) => frames.push(JSON.parse(e.data));
  socket.onclose = (e) => {
    code = e.code;
    reason = e.reason;
  };
  await until(
    () => socket.readyState !== WebSocket.CONNECTING || undefined,
    5000,
    "open",
  );
  let taken = 0;
  return {
    socket,
    async frames(count, timeoutMs = 5000) {
      await until(
        () => {
          if (frames.length >= taken + count) return true;
          if (code !== undefined) {
            throw new Error(
              `closed (${code}) after ${JSON.stringify(frames.slice(taken))}`,
            );
          }
        },
        timeoutMs,
        `${count} frames`,
      );
      taken += count;
      return frames.slice(taken - count, taken);
    },
    closed: (timeoutMs = 5000) => until(() => code, timeoutMs, "close"),
    get reason() {
      return reason;
    },
    close: () => socket.close(),
  };
}

/** What a raw upgrade request was answered: its status line's code, its headers and what followed them. */
export interface RawAnswer {
  status: number;
  head: string;
  /** The connection, still open after a 101; the caller closes it. */
  conn: Deno.Conn;
  /** Bytes read past the head (a body, or the first frames). */
  rest: Uint8Array;
}

/**
 * Sends a WebSocket upgrade for `url` over a bare TCP connection, with
 * `headers` added, and reads the answer's head: what a client that never
 * answers a ping, or a browser from another origin, sends.
 */
export async function rawUpgrade(
  url: string,
  headers: Record<string, string> = {},
): Promise<RawAnswer> {
  const { hostname, port, pathname, search, host } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  const lines = [
    `GET ${pathname}${search} HTTP/1.1`,
    `Host: ${host}`,
    "Upgrade: websocket",
    "Connection: Upgrade",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "Sec-WebSocket-Version: 13",
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  await conn.write(new TextEncoder().encode(`${lines.join("\r\n")}\r\n\r\n`));
  let got = new Uint8Array(0);
  const buffer = new Uint8Array(4096);
  const decoder = new TextDecoder();
  for (let i = 0; i < 100; i++) {
    const end = decoder.decode(got).indexOf("\r\n\r\n");
    if (end !== -1) {
      const head = decoder.decode(got).slice(0, end);
      const headBytes = new TextEncoder().encode(head).length + 4;
      return {
        status: Number(head.split(" ")[1]),
        head,
        conn,
        rest: got.slice(headBytes),
      };
    }
    const n = await conn.read(buffer);
    if (n === null) break;
    got = new Uint8Array([...got, ...buffer.subarray(0, n)]);
  }
  conn.close();
  throw new Error(`no answer head: ${decoder.decode(got)}`);
}
