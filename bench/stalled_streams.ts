/**
 * `deno task bench:stalled-streams`: what readers that never read cost. Posts
 * five messages of `--event-bytes` (the catch-up every new reader gets), then
 * three waves of `--readers` raw sockets that send `GET /events` (target
 * `program`), or a WebSocket upgrade of it (`program-ws`), and never read a
 * byte: open them all, let the catch-up settle, note RSS; close them
 * all, let the server notice, note RSS. The same waves against a plain
 * `Deno.serve` event stream sending the same catch-up (`bench/sse_floor.ts`,
 * with one shared copy of the bytes and with a fresh copy per reader) give
 * the floor Deno and the kernel set in the same run.
 * @module
 */

import { flagsOf, usageError } from "./cli.ts";
import { statusMb } from "./proc.ts";
import { type RunningServer, startServer } from "../tests/_support/program.ts";

const USAGE = `Usage: deno task bench:stalled-streams [flags]
  --readers=N         never-reading readers per wave (default 1000)
  --waves=N           waves of them (default 3)
  --event-bytes=N     size of each of the five catch-up messages (default 61440)
  --settle-ms=N       wait after a wave opens or closes before RSS is read (default 3000)
  --targets=T,...     program, program-ws, floor-shared, floor-fresh (default all)
  --root=DIR          measure the program of another checkout (default this one)
  --args=A,...        more flags for the program, such as --max-stream-buffer-bytes=N
  --env=K=V,...       environment of the program, such as MALLOC_ARENA_MAX=2`;

const flags = flagsOf({
  readers: { type: "string", default: "1000" },
  waves: { type: "string", default: "3" },
  "event-bytes": { type: "string", default: "61440" },
  "settle-ms": { type: "string", default: "3000" },
  targets: {
    type: "string",
    default: "program,program-ws,floor-shared,floor-fresh",
  },
  root: { type: "string" },
  args: { type: "string", default: "" },
  env: { type: "string", default: "" },
}, USAGE);
const READERS = Number(flags.readers);
const WAVES = Number(flags.waves);
const EVENT_BYTES = Number(flags["event-bytes"]);
const SETTLE_MS = Number(flags["settle-ms"]);
const TARGETS = flags.targets.split(",");
const TARGET_NAMES = ["program", "program-ws", "floor-shared", "floor-fresh"];
const ENV = Object.fromEntries(
  flags.env.split(",").filter((e) => e !== "").map((e) => {
    const at = e.indexOf("=");
    return [e.slice(0, at), e.slice(at + 1)];
  }),
);
if (
  !(Number.isInteger(READERS) && READERS >= 1 && READERS <= 10_000) ||
  !(Number.isInteger(WAVES) && WAVES >= 1 && WAVES <= 20) ||
  !(Number.isInteger(EVENT_BYTES) && EVENT_BYTES >= 1 &&
    EVENT_BYTES <= 1_000_000) ||
  !(Number.isInteger(SETTLE_MS) && SETTLE_MS >= 0 && SETTLE_MS <= 60_000) ||
  TARGETS.some((t) => !TARGET_NAMES.includes(t))
) {
  usageError("bad --readers, --waves, --event-bytes, --settle-ms or --targets");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rssMb = (server: RunningServer) => statusMb(server.process.pid, "VmRSS");

/** How a target tells how many streams it has open. */
type OpenCount = () => Promise<number>;

async function startTarget(
  target: string,
): Promise<{ server: RunningServer; openCount: OpenCount }> {
  if (target.startsWith("program")) {
    const server = await startServer(
      [
        "--quiet",
        `--max-body-bytes=${EVENT_BYTES + 1024}`,
        `--max-streams=${READERS + 10}`,
        // Every reader connects from this one address.
        `--max-streams-per-client=${READERS + 10}`,
        `--max-websockets-per-client=${READERS + 10}`,
        ...flags.args.split(",").filter((a) => a !== ""),
      ],
      ENV,
      { root: flags.root },
    );
    const token = (await (await fetch(`${server.url}users`, {
      method: "POST",
      body: "bench",
    })).json()).token;
    // The JSON of a message adds its name and time to the text.
    const text = "x".repeat(EVENT_BYTES - 100);
    for (let i = 0; i < 5; i++) {
      const res = await fetch(server.url, {
        method: "POST",
        headers: { "x-messaging-token": token },
        body: JSON.stringify({ text }),
      });
      if (res.status !== 200) throw new Error(await res.text());
      await res.body?.cancel();
    }
    return {
      server,
      openCount: async () => {
        const text = await (await fetch(`${server.url}metrics`)).text();
        return Number(text.match(/^lms_event_streams_open (\d+)/m)?.[1]);
      },
    };
  }
  const server = await startServer(
    [
      `--event-bytes=${EVENT_BYTES}`,
      ...(target === "floor-fresh" ? ["--fresh"] : []),
    ],
    {},
    { entry: new URL("./sse_floor.ts", import.meta.url).pathname },
  );
  return {
    server,
    openCount: async () =>
      Number(await (await fetch(`${server.url}count`)).text()),
  };
}

/** Waits (up to 30 s) until `openCount` answers `want`. */
async function until(openCount: OpenCount, want: number): Promise<number> {
  let count = await openCount();
  for (let tries = 0; count !== want && tries < 300; tries++) {
    await sleep(100);
    count = await openCount();
  }
  return count;
}

/** The headers of a WebSocket upgrade, as a client that never reads sends them. */
const UPGRADE = "Upgrade: websocket\r\nConnection: Upgrade\r\n" +
  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";

/** Opens `count` sockets that ask for the stream (upgraded to a WebSocket for `program-ws`) and never read. */
async function openStalled(
  url: string,
  count: number,
  target: string,
): Promise<Deno.Conn[]> {
  const { hostname, port } = new URL(url);
  const request = new TextEncoder().encode(
    `GET /events HTTP/1.1\r\nHost: bench\r\n${
      target === "program-ws" ? UPGRADE : ""
    }\r\n`,
  );
  const conns: Deno.Conn[] = [];
  // In batches, so the listen queue is never overrun.
  for (let i = 0; i < count; i += 100) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(100, count - i) }, async () => {
        const conn = await Deno.connect({ hostname, port: Number(port) });
        await conn.write(request);
        return conn;
      }),
    );
    conns.push(...batch);
    await sleep(10);
  }
  return conns;
}

interface Row {
  target: string;
  idleMb: number;
  /** RSS with each wave open, then after it closed. */
  waves: { openMb: number; opened: number; closedMb: number; left: number }[];
}

async function measure(target: string): Promise<Row> {
  const { server, openCount } = await startTarget(target);
  try {
    await sleep(SETTLE_MS);
    const row: Row = { target, idleMb: rssMb(server), waves: [] };
    for (let wave = 0; wave < WAVES; wave++) {
      const conns = await openStalled(server.url, READERS, target);
      const opened = await until(openCount, READERS);
      await sleep(SETTLE_MS);
      const openMb = rssMb(server);
      for (const conn of conns) conn.close();
      const left = await until(openCount, 0);
      await sleep(SETTLE_MS);
      row.waves.push({ openMb, opened, closedMb: rssMb(server), left });
      console.error(
        JSON.stringify({ target, wave: wave + 1, ...row.waves.at(-1) }),
      );
    }
    return row;
  } finally {
    await server.stop("SIGTERM");
  }
}

const rows: Row[] = [];
for (const target of TARGETS) rows.push(await measure(target));

const kb = (mb: number) => (mb * 1024 / READERS).toFixed(0);
console.log(
  `${READERS} readers that never read, catch-up 5 × ${EVENT_BYTES} B, ${WAVES} waves${
    flags.env === "" ? "" : `, program env ${flags.env}`
  }\n`,
);
console.log(
  `| target | idle RSS | per reader (wave 1 open) | ${
    rows[0]?.waves.map((_, i) => `wave ${i + 1} open / closed`).join(" | ")
  } | last closed − first closed | streams opened / left |`,
);
console.log(
  `|---|--:|--:|${rows[0]?.waves.map(() => "--:|").join("")}--:|--:|`,
);
for (const { target, idleMb, waves } of rows) {
  const first = waves[0];
  const last = waves.at(-1);
  if (first === undefined || last === undefined) continue;
  console.log(
    `| ${target} | ${idleMb.toFixed(0)} MB | ${
      kb(first.openMb - idleMb)
    } KB | ${
      waves.map((w) => `${w.openMb.toFixed(0)} / ${w.closedMb.toFixed(0)} MB`)
        .join(" | ")
    } | ${(last.closedMb - first.closedMb).toFixed(0)} MB | ${
      waves.map((w) => `${w.opened}/${w.left}`).join(", ")
    } |`,
  );
}
