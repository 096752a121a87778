/**
 * The readers for `deno task bench:streams`, in a process of their own: holds
 * N event streams open over raw sockets (lighter than `fetch`), or N
 * WebSockets (Deno's client, which answers the server's pings), prints
 * `ready` once every stream has its first bytes, then for each message id
 * notes when the last of the N streams received it, and prints those times
 * (ms since the epoch, sub-millisecond) as JSON when told to stop on stdin.
 * @module
 */

const [addresses = "", countText, transport = "sse"] = Deno.args;
const targets = addresses.split(",");
const count = Number(countText);
const now = () => performance.timeOrigin + performance.now();

const seen = new Map<number, number>();
const lastSeen = new Map<number, number>();
let opened = 0;
/** The status line of the first stream refused, if any was. */
let refused: string | undefined;
const conns: Deno.TcpConn[] = [];
const request = new TextEncoder().encode(
  "GET /events HTTP/1.1\r\nHost: bench\r\n\r\n",
);

/** Counts one reader's sight of message `id` at `at`. */
function saw(id: number, at: number): void {
  const total = (seen.get(id) ?? 0) + 1;
  seen.set(id, total);
  if (total === count) lastSeen.set(id, at);
}

async function hold(address: string): Promise<void> {
  const [hostname, port] = address.split(":");
  const conn = await Deno.connect({ hostname, port: Number(port) });
  conns.push(conn);
  await conn.write(request);
  const decoder = new TextDecoder();
  const buffer = new Uint8Array(4096);
  let carry = "";
  let first = true;
  for (;;) {
    let n: number | null;
    try {
      n = await conn.read(buffer);
    } catch {
      return;
    }
    if (n === null) return;
    const text = carry + decoder.decode(buffer.subarray(0, n));
    if (first) {
      first = false;
      // A refusal (503 past --max-streams, 429 past the per-client cap) is
      // an answer too, but no stream.
      if (!text.startsWith("HTTP/1.1 200 ")) {
        refused ??= text.slice(0, text.indexOf("\r\n"));
        return;
      }
      opened++;
    }
    const at = now();
    for (const match of text.matchAll(/\nid: (\d+)\n/g)) {
      saw(Number(match[1]), at);
    }
    carry = text.slice(-24);
  }
}

const sockets: WebSocket[] = [];

function holdSocket(address: string): void {
  const socket = new WebSocket(`ws://${address}/events`);
  sockets.push(socket);
  socket.onopen = () => opened++;
  // Deno's client tells no status: a refusal is an error before opening.
  socket.onerror = () => {
    if (socket.readyState !== WebSocket.OPEN) refused ??= "upgrade refused";
  };
  socket.onmessage = (e) => {
    const at = now();
    // Every frame is one whole event; a message's id comes before its data.
    const id = /"id":(\d+)/.exec(String(e.data))?.[1];
    if (id !== undefined) saw(Number(id), at);
  };
}

// Open in batches so the listen queue is never overrun.
for (let i = 0; i < count; i += 200) {
  await Promise.all(
    Array.from({ length: Math.min(200, count - i) }, (_, j) => {
      const target = targets[(i + j) % targets.length];
      if (target === undefined) return;
      if (transport === "websocket") holdSocket(target);
      else hold(target);
      return new Promise((resolve) => setTimeout(resolve, 0));
    }),
  );
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
console.log(JSON.stringify(Object.fromEntries(lastSeen)));
for (const socket of sockets) socket.close();
for (const conn of conns) {
  try {
    conn.close();
  } catch {
    // Already closed.
  }
}
Deno.exit(0);
