/**
 * `deno task bench:scale`: many followers over several processes sharing
 * one Redis and one port (`--reuse-port`), against the plain fan-out floor
 * (`bench/fanout_floor.ts`) on as many processes. For each step (followers)
 * and transport: how long everyone takes to connect, RSS per follower,
 * server CPU per delivered event, the delay from each post's send to each
 * follower's receipt (p50, p99, max), every id checked at every follower
 * (lost, duplicated), and how busy the followers' own processes were.
 * Writes bench/results/scale.md and scale.svg.
 *
 * `--storms`: 50,000 WebSocket followers over 3 processes (`--storm-processes`); kill -9 one
 * (restarted at once, as a supervisor would) and time until every follower
 * is following again with nothing missed; then restart all at once.
 * Writes bench/results/scale_storms.md.
 * @module
 */

import { flagsOf, usageError } from "./cli.ts";
import { percentile } from "./median.ts";
import { renderChart } from "./chart.ts";
import {
  addCounts,
  cpuSeconds,
  freshRedis,
  killAll,
  loadAverage,
  machineBusySeconds,
  now,
  postAll,
  Poster,
  PROGRAM_ARGS,
  type ReaderCounts,
  type ReaderReport,
  Readers,
  rssMb,
  sleep,
  split,
  startOne,
  sum,
  type Target,
  waitCaughtUp,
} from "./scale_parts.ts";
import { freePort } from "../tests/_support/program.ts";
import { runStorms } from "./scale_storms.ts";

const USAGE =
  `Usage: deno task bench:scale [--steps=1000,10000,25000,50000,100000] [--transports=websocket,sse] [--posts=6] [--interval-ms=2000] [--per-process=17000] [--targets=floor,program] [--storms] [--storm-followers=50000] [--storm-processes=3] [--out=bench/results/scale]`;

const flags = flagsOf({
  steps: { type: "string", default: "1000,10000,25000,50000,100000" },
  transports: { type: "string", default: "websocket,sse" },
  posts: { type: "string", default: "6" },
  "interval-ms": { type: "string", default: "2000" },
  "per-process": { type: "string", default: "17000" },
  targets: { type: "string", default: "floor,program" },
  storms: { type: "boolean", default: false },
  "storm-followers": { type: "string", default: "50000" },
  "storm-processes": { type: "string", default: "3" },
  out: { type: "string", default: "bench/results/scale" },
}, USAGE);
const steps = flags.steps.split(",").map(Number);
const transports = flags.transports.split(",");
const targets = flags.targets.split(",") as Target[];
const posts = Number(flags.posts);
const interval = Number(flags["interval-ms"]);
const perProcess = Number(flags["per-process"]);
if (
  steps.some((n) => !(Number.isInteger(n) && n >= 1 && n <= 200_000)) ||
  transports.some((t) => t !== "sse" && t !== "websocket") ||
  targets.some((t) => t !== "program" && t !== "floor") ||
  !(Number.isInteger(posts) && posts >= 1 && posts <= 1000) ||
  !(interval >= 10) || !(perProcess >= 1 && perProcess <= 19_900)
) {
  usageError(
    "bad --steps, --transports, --targets, --posts, --interval-ms or --per-process",
  );
}

interface Row {
  transport: string;
  target: Target;
  followers: number;
  processes: number;
  readerProcesses: number;
  failed?: string;
  connectedMs: number;
  lost: number;
  duplicated: number;
  delivered: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  rssPerFollowerKb: number;
  cpuUsPerEvent: number;
  /** Server CPU over the posting window, % of one core (all processes). */
  serverCpuPct: number;
  /** The followers' processes' CPU over the posting window, % of one core. */
  readerCpuPct: number;
  readerCpuUsPerEvent: number;
  /**
   * The rest of the machine over the posting window, % of one core: Redis,
   * the poster and whatever else runs on the host (other jobs).
   */
  otherCpuPct: number;
  /** The load average over the last minute, at the end of the window. */
  load: number;
  reconnects: number;
  /** How open streams ended during the row (WebSocket close codes). */
  ended: Record<string, number>;
  pings: number;
  windowS: number;
  /** The longest a post took to be answered. */
  slowestPostMs: number;
}

const cpuOf = (pids: number[]) => sum(pids.map(cpuSeconds));

/** Opens every follower; the time it took, or why it failed. */
async function connectAll(
  port: number,
  n: number,
  transport: string,
  processes: number,
): Promise<{ readers: Readers[]; ms: number; failed?: string }> {
  const started = now();
  let first = 0;
  const readers = split(n, processes).map((count) => {
    const r = new Readers({ port, count, first, transport });
    first += count;
    return r;
  });
  const ready = await Promise.all(
    readers.map((r) => r.next<ReaderCounts>(330_000)),
  );
  const ms = now() - started;
  const total = addCounts(ready);
  const failed = ready.every((r) => r.ready)
    ? undefined
    : `only ${total.open} of ${n} open; refused ${
      JSON.stringify(total.refused)
    }, ${total.errors} socket errors`;
  return { readers, ms, failed };
}

/** A row with nothing measured yet. */
function failedRow(target: Target, transport: string, n: number): Row {
  const processes = Math.ceil(n / perProcess);
  return {
    transport,
    target,
    followers: n,
    processes,
    readerProcesses: processes,
    connectedMs: NaN,
    lost: NaN,
    duplicated: NaN,
    delivered: 0,
    p50Ms: NaN,
    p99Ms: NaN,
    maxMs: NaN,
    rssPerFollowerKb: NaN,
    cpuUsPerEvent: NaN,
    serverCpuPct: NaN,
    readerCpuPct: NaN,
    readerCpuUsPerEvent: NaN,
    otherCpuPct: NaN,
    load: NaN,
    reconnects: 0,
    ended: {},
    pings: 0,
    windowS: 0,
    slowestPostMs: NaN,
  };
}

/** One step: `n` followers of `target` over `transport`. */
async function measure(
  target: Target,
  transport: string,
  n: number,
): Promise<Row> {
  const redis = await freshRedis();
  const port = freePort();
  const processes = Math.ceil(n / perProcess);
  const servers = [];
  for (let i = 0; i < processes; i++) {
    servers.push(
      await startOne({ target, port, store: redis.url, args: PROGRAM_ARGS }),
    );
  }
  const serverPids = servers.map((s) => s.process.pid);
  const poster = new Poster(port);
  await poster.register();
  const rssBefore = sum(serverPids.map(rssMb));
  const { readers, ms, failed } = await connectAll(
    port,
    n,
    transport,
    processes,
  );
  const row: Row = {
    ...failedRow(target, transport, n),
    readerProcesses: readers.length,
    failed,
    connectedMs: ms,
  };
  try {
    if (failed) return row;
    await sleep(2000);
    row.rssPerFollowerKb = (sum(serverPids.map(rssMb)) - rssBefore) * 1024 /
      n;
    const readerPids = readers.map((r) => r.process.pid);
    const [server0, readers0, machine0, t0] = [
      cpuOf(serverPids),
      cpuOf(readerPids),
      machineBusySeconds(),
      now(),
    ];
    const { sent, slowestMs } = await postAll(poster, posts, interval);
    row.slowestPostMs = slowestMs;
    await waitCaughtUp(readers, n, posts, 60_000);
    const [server1, readers1, machine1, t1] = [
      cpuOf(serverPids),
      cpuOf(readerPids),
      machineBusySeconds(),
      now(),
    ];
    row.load = loadAverage();
    const ids = Object.keys(sent).map(Number);
    const reports = await Promise.all(
      readers.map((r) => r.ask<ReaderReport>({ cmd: "report", sent, ids })),
    );
    const delays = reports.flatMap((r) => r.delays).sort((a, b) => a - b);
    const counts = addCounts(reports);
    row.windowS = (t1 - t0) / 1000;
    row.delivered = delays.length;
    row.lost = sum(reports.map((r) => r.lost));
    row.duplicated = sum(reports.map((r) => r.duplicated));
    row.p50Ms = percentile(delays, 0.5);
    row.p99Ms = percentile(delays, 0.99);
    row.maxMs = delays.at(-1) ?? NaN;
    row.cpuUsPerEvent = (server1 - server0) * 1e6 / delays.length;
    row.serverCpuPct = (server1 - server0) * 100 / row.windowS;
    row.readerCpuPct = (readers1 - readers0) * 100 / row.windowS;
    row.readerCpuUsPerEvent = (readers1 - readers0) * 1e6 / delays.length;
    row.otherCpuPct = (machine1 - machine0 - (server1 - server0) -
      (readers1 - readers0)) * 100 / row.windowS;
    row.reconnects = counts.reconnects;
    row.ended = counts.ended;
    row.pings = counts.pings;
    return row;
  } finally {
    await Promise.all(readers.map((r) => r.quit()));
    await Promise.all(servers.map((s) => s.stop("SIGKILL")));
    await redis.kill();
  }
}

const fixed = (x: number, digits = 1) =>
  Number.isNaN(x) ? "—" : x.toFixed(digits);
const ratio = (a: number, b: number) =>
  Number.isNaN(a) || Number.isNaN(b) ? "—" : `${(a / b).toFixed(2)}×`;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const delays = (r?: Row) =>
  r && !r.failed
    ? `${fixed(r.p50Ms)} / ${fixed(r.p99Ms)} / ${fixed(r.maxMs)}`
    : "—";

/** How streams ended, when any did: " (1001: 3)". */
const endings = (ended: Record<string, number> = {}) => {
  const list = Object.entries(ended).map(([how, n]) => `${how}: ${n}`);
  return list.length ? ` (${list.join(", ")})` : "";
};

/** The table of one transport: each step, the program beside its floor. */
function table(rows: Row[], transport: string): string[] {
  const lines = [
    `### ${transport === "sse" ? "Event streams (SSE)" : "WebSocket"}`,
    "",
    "| followers | server processes | followers' processes | connected in (program / floor) | lost / dup (program / floor) | delay p50 / p99 / max, ms: program | floor | KB per follower: program | floor | ratio | µs CPU per event: program | floor | ratio | server CPU, % of a core: program / floor | followers' CPU, % of a core: program / floor | rest of the machine, % of a core (load average): program / floor | reconnects (how streams ended): program / floor |",
    "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
  ];
  const steps = [...new Set(rows.map((r) => r.followers))];
  for (const n of steps) {
    const at = (target: Target) =>
      rows.find((r) =>
        r.transport === transport && r.followers === n && r.target === target
      );
    const [p, f] = [at("program"), at("floor")];
    if (!p && !f) continue;
    const any = (p ?? f)!;
    const both = (get: (r: Row) => string) =>
      `${p ? get(p) : "—"} / ${f ? get(f) : "—"}`;
    lines.push(
      `| ${
        n.toLocaleString("en")
      } | ${any.processes} | ${any.readerProcesses} | ${
        both((r) => r.failed ? `failed: ${r.failed}` : seconds(r.connectedMs))
      } | ${both((r) => `${r.lost}/${r.duplicated}`)} | ${delays(p)} | ${
        delays(f)
      } | ${fixed(p?.rssPerFollowerKb ?? NaN)} | ${
        fixed(f?.rssPerFollowerKb ?? NaN)
      } | ${ratio(p?.rssPerFollowerKb ?? NaN, f?.rssPerFollowerKb ?? NaN)} | ${
        fixed(p?.cpuUsPerEvent ?? NaN, 2)
      } | ${fixed(f?.cpuUsPerEvent ?? NaN, 2)} | ${
        ratio(p?.cpuUsPerEvent ?? NaN, f?.cpuUsPerEvent ?? NaN)
      } | ${both((r) => fixed(r.serverCpuPct, 0))} | ${
        both((r) => fixed(r.readerCpuPct, 0))
      } | ${both((r) => `${fixed(r.otherCpuPct, 0)} (${fixed(r.load)})`)} | ${
        both((r) => `${r.reconnects}${endings(r.ended)}`)
      } |`,
    );
  }
  return [...lines, ""];
}

function write(rows: Row[], header: string): void {
  const md = [
    header,
    "",
    ...transports.flatMap((t) => table(rows, t)),
    "Every row as measured (JSON):",
    "",
    "```json",
    ...rows.map((r) => JSON.stringify(r)),
    "```",
    "",
  ];
  Deno.writeTextFileSync(`${flags.out}.md`, md.join("\n"));
  const chart = rows.filter((r) => r.target === "program" && !r.failed)
    .flatMap((p) => {
      const f = rows.find((r) =>
        r.target === "floor" && r.transport === p.transport &&
        r.followers === p.followers && !r.failed
      );
      return f
        ? [{
          scenario: `${p.transport} ${p.followers.toLocaleString("en")}`,
          target: `${p.processes} process${p.processes === 1 ? "" : "es"}`,
          rpsRatio: p.rssPerFollowerKb / f.rssPerFollowerKb,
          cpuRatio: p.cpuUsPerEvent / f.cpuUsPerEvent,
        }]
        : [];
    });
  Deno.writeTextFileSync(
    `${flags.out}.svg`,
    renderChart(chart, {
      title: "The program ÷ the plain fan-out floor (same step, same run)",
      first: "KB per follower ÷ floor",
      second: "µs CPU per event ÷ floor",
      line: "1.0 = floor",
    }),
  );
}

async function runSteps(): Promise<void> {
  const rows: Row[] = [];
  const header = `# \`deno task bench:scale --steps=${flags.steps}\` (${
    new Date().toISOString().slice(0, 16)
  } UTC)`;
  const stopped = new Set<string>();
  for (const n of steps) {
    for (const transport of transports) {
      if (stopped.has(transport)) continue;
      for (const target of targets) {
        const row = await measure(target, transport, n).catch(
          async (error) => {
            // Whatever this step left running.
            await killAll();
            return {
              ...failedRow(target, transport, n),
              failed: (error as Error).message,
            };
          },
        );
        rows.push(row);
        console.error(JSON.stringify(row));
        write(rows, header);
        if (row.failed) stopped.add(transport);
      }
    }
  }
  for (const t of transports) console.log(table(rows, t).join("\n"));
}

Deno.addSignalListener("SIGINT", async () => {
  await killAll();
  Deno.exit(130);
});
try {
  if (flags.storms) {
    await runStorms(
      Number(flags["storm-followers"]),
      perProcess,
      Number(flags["storm-processes"]),
    );
  } else await runSteps();
} finally {
  await killAll();
}
