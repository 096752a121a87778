/**
 * The followers for `deno task bench:scale`, in a process of their own:
 * `--count` event streams or WebSockets to `--target`, each from a source
 * address of its own (127.10.0.0 upwards, from follower `--first` of the
 * whole run), so the program sees one client per follower and its
 * per-client caps stay as shipped. `Deno.connect` cannot choose a source
 * address; `node:net`'s `localAddress` can, so the sockets are Node's, read
 * by the raw parser of `bench/stream_readers.ts`.
 *
 * Every follower stamps each message it receives (ms since the epoch,
 * sub-millisecond) and keeps the ids it saw. A follower whose stream ends or
 * is refused reconnects as the package's client does (`reconnectDelay`: 1
 * to 2 s, doubling after attempts that opened nothing, at least the
 * refusal's `Retry-After`), resuming with `?lastEventId=` after the last
 * id it saw; a handshake not
 * answered within 30 s (a SYN dropped on a full listen queue, retried by the
 * kernel ever more slowly) is given up and tried again the same way.
 *
 * Prints one JSON line once every follower is open (or after
 * `--connect-timeout-ms`), then answers JSON commands on stdin, one a line:
 * `{"cmd":"status","upTo":K}` (how many are open and have every id up to
 * K), `{"cmd":"report","sent":{"ID":ms,...},"ids":[...]}` (delays from each
 * send to each receipt, ids lost and duplicated at each follower), and
 * `{"cmd":"quit"}`.
 * @module
 */

import net from "node:net";
import { parseArgs } from "node:util";
import { reconnectDelay } from "../src/client/event_stream_client.ts";
import {
  streamParser,
  streamRequest,
  type Transport,
} from "./stream_readers.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    target: { type: "string", default: "127.0.0.1:8000" },
    count: { type: "string", default: "1000" },
    first: { type: "string", default: "0" },
    transport: { type: "string", default: "websocket" },
    "max-pending": { type: "string", default: "256" },
    "connect-timeout-ms": { type: "string", default: "300000" },
  },
});
const [host = "127.0.0.1", portText = "8000"] = values.target.split(":");
const port = Number(portText);
const count = Number(values.count);
const first = Number(values.first);
const transport: Transport = values.transport === "sse" ? "sse" : "websocket";
const maxPending = Number(values["max-pending"]);
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** How long a connection may take to open its stream before it is tried again. */
const HANDSHAKE_MS = 30_000;

/** Follower `g` of the whole run connects from 127.(10 + g / 65536).x.y. */
export function sourceOf(g: number): string {
  return `127.${10 + (g >> 16)}.${(g >> 8) & 255}.${g & 255}`;
}

/** Where a follower is: its SYN unanswered, its request unanswered, its stream open, or waiting to retry. */
type Phase = "connecting" | "asking" | "open" | "waiting";

interface Follower {
  index: number;
  ids: number[];
  lastId?: number;
  open: boolean;
  phase: Phase;
  /** On this connection: messages and pings received (what a silent stream lacks). */
  heard: { messages: number; pings: number };
  /** Failed attempts since the last open stream. */
  attempt: number;
  socket?: net.Socket;
}

const followers: Follower[] = Array.from(
  { length: count },
  (_, index) => ({
    index,
    ids: [],
    open: false,
    phase: "connecting" as Phase,
    heard: { messages: 0, pings: 0 },
    attempt: 0,
  }),
);
/** When each id arrived, at every follower. */
const receipts = new Map<number, number[]>();
const counts = {
  open: 0,
  pending: 0,
  opens: 0,
  reconnects: 0,
  errors: 0,
  pings: 0,
  missed: 0,
  received: 0,
  refusedWithoutRetryAfter: 0,
  handshakeTimeouts: 0,
};
const refused: Record<string, number> = {};
/** How streams that were open ended: a WebSocket close code, or `no close frame`. */
const ended: Record<string, number> = {};
const countEnd = (how: string) => void (ended[how] = (ended[how] ?? 0) + 1);
let stopping = false;

/** The refusal's status line counted; its `Retry-After` in seconds, if any. */
function noteRefusal(head: string): number | undefined {
  const retry = /\r\nretry-after: *(\d+)/i.exec(head)?.[1];
  const status = `${head.slice(0, head.indexOf("\r\n")) || "no answer"}${
    retry === undefined ? "" : `, Retry-After: ${retry}`
  }`;
  refused[status] = (refused[status] ?? 0) + 1;
  if (retry === undefined) counts.refusedWithoutRetryAfter++;
  return retry === undefined ? undefined : Number(retry);
}

function reconnectLater(f: Follower, retryAfter?: number): void {
  if (stopping) return;
  const delay = reconnectDelay(f.attempt, undefined, retryAfter);
  f.attempt++;
  f.phase = "waiting";
  counts.reconnects++;
  setTimeout(() => connect(f), delay);
}

function saw(f: Follower, id: number, at: number): void {
  f.ids.push(id);
  f.lastId = id;
  counts.received++;
  let times = receipts.get(id);
  if (times === undefined) receipts.set(id, times = []);
  times.push(at);
}

function connect(f: Follower): void {
  if (stopping) return;
  f.phase = "connecting";
  // Reset here, not on opening: frames may come in the 101's own chunk.
  f.heard = { messages: 0, pings: 0 };
  counts.pending++;
  let settled = false;
  let retryAfter: number | undefined;
  let closeCode: number | undefined;
  const settle = () => {
    if (!settled) counts.pending--;
    settled = true;
    clearTimeout(handshake);
  };
  const socket = net.connect({
    host,
    port,
    localAddress: sourceOf(first + f.index),
  });
  f.socket = socket;
  socket.setNoDelay(true);
  const parse = streamParser(transport, {
    saw: (id, at) => {
      f.heard.messages++;
      saw(f, id, at);
    },
    write: (bytes) => void socket.write(bytes),
    pinged: () => {
      f.heard.pings++;
      counts.pings++;
    },
    gap: (missed) => void (counts.missed += missed),
    closed: (code) => {
      closeCode = code;
    },
  });
  socket.on("connect", () => {
    f.phase = "asking";
    socket.write(streamRequest(transport, f.lastId));
  });
  // A handshake that never completes (a listen queue lost with its process,
  // an answer that never comes) is given up and tried again.
  const handshake = setTimeout(() => {
    if (!settled) {
      counts.handshakeTimeouts++;
      socket.destroy();
    }
  }, HANDSHAKE_MS);
  socket.on("data", (chunk: Uint8Array) => {
    const result = parse(chunk, now());
    if (result.state === "open" && result.opened) {
      settle();
      f.open = true;
      f.phase = "open";
      f.attempt = 0;
      counts.open++;
      counts.opens++;
    } else if (result.state === "refused") {
      settle();
      retryAfter = noteRefusal(result.head);
      socket.destroy();
    } else if (result.state === "ended") socket.destroy();
  });
  socket.on("error", () => void counts.errors++);
  socket.on("close", () => {
    settle();
    if (f.open) {
      counts.open--;
      countEnd(closeCode === undefined ? "no close frame" : String(closeCode));
    }
    f.open = false;
    reconnectLater(f, retryAfter);
  });
}

/** Opens every follower, at most `maxPending` handshakes at a time. */
async function openAll(): Promise<void> {
  const started = now();
  const deadline = started + Number(values["connect-timeout-ms"]);
  for (const f of followers) {
    while (counts.pending >= maxPending && now() < deadline) await sleep(2);
    connect(f);
  }
  while (counts.open < count && now() < deadline) await sleep(20);
  console.log(JSON.stringify({
    ready: counts.open === count,
    ms: now() - started,
    ...counts,
    refused,
    ended,
  }));
}

/** How many followers are open and have seen every id from 1 up to `upTo`. */
function status(upTo: number) {
  let caughtUp = 0;
  /** Where the followers not yet caught up are (`open`: open but behind). */
  const behind: Record<string, number> = {};
  /** A few silent followers' source addresses, to find their server side with `ss`. */
  const silent: string[] = [];
  for (const f of followers) {
    if (f.open && (upTo === 0 || (f.lastId ?? 0) >= upTo)) caughtUp++;
    else if (f.phase !== "open") behind[f.phase] = (behind[f.phase] ?? 0) + 1;
    else {
      // Open but behind: has the stream said anything since it opened?
      const { messages, pings } = f.heard;
      const how = messages > 0
        ? "open"
        : pings > 0
        ? "open, pinged, no message"
        : "open, silent";
      behind[how] = (behind[how] ?? 0) + 1;
      if (how === "open, silent" && silent.length < 5 && f.socket) {
        silent.push(`${f.socket.localAddress}:${f.socket.localPort}`);
      }
    }
  }
  return { caughtUp, behind, silent, ...counts, refused, ended };
}

/** Delays from each send to each receipt; ids each follower lost or saw twice. */
function report(sent: Record<string, number>, ids: number[]) {
  const delays: number[] = [];
  for (const [id, at] of Object.entries(sent)) {
    for (const t of receipts.get(Number(id)) ?? []) {
      delays.push(Math.round((t - at) * 100) / 100);
    }
  }
  let lost = 0, duplicated = 0, followersWithLoss = 0;
  for (const f of followers) {
    const seen = new Map<number, number>();
    for (const id of f.ids) seen.set(id, (seen.get(id) ?? 0) + 1);
    let fLost = 0;
    for (const id of ids) {
      const n = seen.get(id) ?? 0;
      if (n === 0) fLost++;
      if (n > 1) duplicated += n - 1;
    }
    lost += fLost;
    if (fLost > 0) followersWithLoss++;
  }
  return {
    delays,
    lost,
    duplicated,
    followersWithLoss,
    ...counts,
    refused,
    ended,
  };
}

async function commands(): Promise<void> {
  let buffered = "";
  for await (
    const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())
  ) {
    buffered += chunk;
    for (
      let nl = buffered.indexOf("\n");
      nl !== -1;
      nl = buffered.indexOf("\n")
    ) {
      const command = JSON.parse(buffered.slice(0, nl));
      buffered = buffered.slice(nl + 1);
      if (command.cmd === "status") {
        console.log(JSON.stringify(status(command.upTo ?? 0)));
      } else if (command.cmd === "report") {
        console.log(JSON.stringify(report(command.sent, command.ids)));
      } else if (command.cmd === "quit") return;
    }
  }
}

if (import.meta.main) {
  await openAll();
  await commands();
  stopping = true;
  for (const f of followers) f.socket?.destroy();
  Deno.exit(0);
}
