/**
 * `deno task bench:streams`: one process holding N open event streams or
 * WebSockets (a separate process holds the readers): idle RSS per reader,
 * and the time from a post's answer until every reader has the event, over
 * 200 posts, for each N and transport, on the memory store and on Redis
 * with two processes (readers split between them, posts on the first).
 * In the same run, for each N and transport, the floor: the plain
 * `Deno.serve` peer (`bench/peers/plain.ts`), which sends each post to
 * every reader in a loop and keeps nothing else per reader.
 * @module
 */

import { flagsOf, usageError } from "./cli.ts";
import { percentile } from "./median.ts";
import { statusMb } from "./proc.ts";
import { startRedis } from "../tests/_support/redis_server.ts";
import { type RunningServer, startServer } from "../tests/_support/program.ts";

const USAGE =
  `Usage: deno task bench:streams [--streams=1000,10000] [--posts=200] [--stores=memory,redis] [--transports=sse,websocket] [--heartbeat-ms=N]`;

const TRANSPORTS = ["sse", "websocket"];
const flags = flagsOf({
  streams: { type: "string", default: "1000,10000" },
  posts: { type: "string", default: "200" },
  stores: { type: "string", default: "memory,redis" },
  transports: { type: "string", default: TRANSPORTS.join(",") },
  // The program's own default unless given; the floor keeps Deno's.
  "heartbeat-ms": { type: "string", default: "" },
}, USAGE);
const counts = flags.streams.split(",").map(Number);
const posts = Number(flags.posts);
const stores = flags.stores.split(",");
const transports = flags.transports.split(",");
if (
  counts.some((n) => !(Number.isInteger(n) && n >= 1 && n <= 18_000)) ||
  !(Number.isInteger(posts) && posts >= 1 && posts <= 10_000) ||
  stores.some((s) => s !== "memory" && s !== "redis") ||
  transports.some((t) => !TRANSPORTS.includes(t)) ||
  !/^\d*$/.test(flags["heartbeat-ms"])
) {
  usageError(
    "bad --streams, --posts, --stores, --transports or --heartbeat-ms",
  );
}

const FLOOR = "floor: plain Deno.serve";
const PLAIN = new URL("./peers/plain.ts", import.meta.url).pathname;

const rssMb = (pid: number) => statusMb(pid, "VmRSS");

/** The program's JavaScript heap in use, from its metrics, in MB. */
async function heapMb(server: RunningServer): Promise<number> {
  const text = await (await fetch(`${server.url}metrics`)).text();
  const bytes = text.match(/^lms_process_heap_used_bytes (\S+)$/m)?.[1];
  return Number(bytes ?? NaN) / 2 ** 20;
}

const now = () => performance.timeOrigin + performance.now();
const sum = (xs: number[]) => xs.reduce((total, x) => total + x, 0);

interface Row {
  store: string;
  transport: string;
  streams: number;
  idleRssPerStreamKb: number;
  /** NaN for the floor, which has no metrics. */
  heapPerStreamKb: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  delivered: number;
  /** Pings the readers answered during the row (WebSocket only). */
  pings: number;
}

/** Reads lines from the readers' process, up to `wanted` of them in all. */
async function readLines(
  lines: ReadableStreamDefaultReader<string>,
  out: string,
  wanted: number,
): Promise<string> {
  while (out.split("\n").length <= wanted) {
    const { done, value } = await lines.read();
    if (done) break;
    out += value;
  }
  return out;
}

async function measure(
  store: string,
  transport: string,
  count: number,
): Promise<Row> {
  const redis = store === "redis" ? await startRedis() : undefined;
  const args = [
    "--quiet",
    `--max-streams=${count + 10}`,
    // Every reader connects from this one address.
    `--max-streams-per-client=${count + 10}`,
    `--max-websockets-per-client=${count + 10}`,
    ...(flags["heartbeat-ms"]
      ? [`--heartbeat-ms=${flags["heartbeat-ms"]}`]
      : []),
    ...(redis ? [`--store=${redis.url}`] : []),
  ];
  const start = () =>
    store === FLOOR ? startServer([], {}, { entry: PLAIN }) : startServer(args);
  const poster = await start();
  const servers: RunningServer[] = [poster];
  if (redis) servers.push(await start());
  const heaps = () =>
    store === FLOOR
      ? Promise.resolve(NaN)
      : Promise.all(servers.map(heapMb)).then(sum);
  try {
    const token = (await (await fetch(`${poster.url}users`, {
      method: "POST",
      body: "bench",
    })).json()).token;
    const before = sum(servers.map((s) => rssMb(s.process.pid)));
    const heapBefore = await heaps();
    const readers = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-net",
        new URL("./stream_readers.ts", import.meta.url).pathname,
        servers.map((s) => new URL(s.url).host).join(","),
        String(count),
        transport,
      ],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const lines = readers.stdout.pipeThrough(new TextDecoderStream())
      .getReader();
    let out = await readLines(lines, "", 1);
    if (!out.startsWith("ready")) throw new Error(`readers: ${out}`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const grown = sum(servers.map((s) => rssMb(s.process.pid))) - before;
    const heapGrown = await heaps() - heapBefore;
    const answered = new Map<number, number>();
    // Posts far enough apart that one has reached every reader before the
    // next: each is measured alone, not queued behind the last.
    const gap = Math.max(20, count / 20);
    for (let i = 0; i < posts; i++) {
      const res = await fetch(poster.url, {
        method: "POST",
        headers: { "x-messaging-token": token },
        body: JSON.stringify({ text: `post ${i}` }),
      });
      answered.set(i + 1, now());
      await res.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, gap));
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const writer = readers.stdin.getWriter();
    await writer.write(new TextEncoder().encode("done\n"));
    await writer.close();
    out = await readLines(lines, out, 2);
    await readers.status;
    const { lastSeen, pings }: {
      lastSeen: Record<string, number>;
      pings: number;
    } = JSON.parse(out.slice(out.indexOf("\n") + 1));
    const delays = [...answered].flatMap(([id, at]) => {
      const seen = lastSeen[id];
      return seen === undefined ? [] : [seen - at];
    }).sort((a, b) => a - b);
    return {
      store: redis ? "redis, 2 processes" : store,
      transport,
      streams: count,
      idleRssPerStreamKb: grown * 1024 / count,
      heapPerStreamKb: heapGrown * 1024 / count,
      p50Ms: percentile(delays, 0.5),
      p99Ms: percentile(delays, 0.99),
      maxMs: delays.at(-1) ?? NaN,
      delivered: delays.length,
      pings,
    };
  } finally {
    for (const server of servers) await server.stop("SIGTERM");
    await redis?.kill();
  }
}

const rows: Row[] = [];
// The floor first at each size and transport, the program's stores right
// after it: the rows compared are measured minutes apart, not a run apart.
for (const count of counts) {
  for (const transport of transports) {
    for (const store of [FLOOR, ...stores]) {
      const row = await measure(store, transport, count);
      rows.push(row);
      console.error(JSON.stringify(row));
    }
  }
}

const kb = (x: number) => Number.isNaN(x) ? "—" : `${x.toFixed(1)} KB`;
const signedKb = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(1)} KB`;
const ms = (x: number) => `${x.toFixed(2)} ms`;
console.log(
  "| store | transport | readers | idle RSS per reader | vs floor | heap per reader | p50 | p99 | p99 ÷ floor | max | pings answered | posts seen by all |",
);
console.log("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
for (const r of rows) {
  const floor = rows.find((f) =>
    f.store === FLOOR && f.transport === r.transport && f.streams === r.streams
  );
  const isFloor = r === floor;
  console.log(
    `| ${r.store} | ${r.transport} | ${r.streams} | ${
      kb(r.idleRssPerStreamKb)
    } | ${
      isFloor || !floor
        ? "—"
        : signedKb(r.idleRssPerStreamKb - floor.idleRssPerStreamKb)
    } | ${kb(r.heapPerStreamKb)} | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} | ${
      isFloor || !floor ? "—" : `${(r.p99Ms / floor.p99Ms).toFixed(2)}×`
    } | ${ms(r.maxMs)} | ${r.pings} | ${r.delivered}/${posts} |`,
  );
}
