/**
 * `deno task bench:scale --storms`: WebSocket followers over 3 (`--storm-processes`) program
 * processes on one port and one Redis, a post every 5 s throughout.
 * First one process is killed with SIGKILL and started again at once (as a
 * supervisor would): how long until every follower is open again and has
 * every message posted before the kill; then all three are stopped
 * (SIGTERM) and started again at once, timed the same way. Followers
 * reconnect with back-off, or after a refusal's `Retry-After`, resuming
 * with `?lastEventId=`. At the end every id is checked at every follower.
 * @module
 */

import {
  addCounts,
  freshRedis,
  now,
  Poster,
  PROGRAM_ARGS,
  type ReaderCounts,
  type ReaderReport,
  Readers,
  sleep,
  split,
  startOne,
} from "./scale_parts.ts";
import { freePort, type RunningServer } from "../tests/_support/program.ts";
import { netstatCounter } from "./proc.ts";

/** The kernel's count of connections dropped because a listen queue was full (the whole host). */
const listenOverflows = () => netstatCounter("ListenOverflows");

const RESULTS = new URL("./results/", import.meta.url).pathname;

interface Storm {
  name: string;
  /** From the signal until every follower was open and caught up. */
  recoveredMs: number;
  /** From the signal until the signalled processes had exited, and until their successors listened. */
  stoppedMs: number;
  listeningMs: number;
  recovered: boolean;
  reconnects: number;
  refused: Record<string, number>;
  refusedWithoutRetryAfter: number;
  /** How open streams ended (WebSocket close codes), counted since the start. */
  ended: Record<string, number>;
  /** Connections the kernel dropped on a full listen queue during the storm (SYNs retried by the client's kernel: 1 s, 2 s, 4 s, ...). */
  listenOverflows: number;
  /** About every 2 s: seconds since the signal, how many were following again, and where the others were. */
  timeline: {
    s: number;
    caughtUp: number;
    behind: Record<string, number>;
    ended: Record<string, number>;
  }[];
}

/**
 * A post every 5 s: 50,000 followers × ~30 µs per event is 1.5 s of server
 * CPU per post (and as much for the followers), so a post a second would
 * saturate 2 cores before any storm.
 */
const POST_EVERY_MS = 5000;

/** Keeps posting until stopped; counts what was stored. */
function keepPosting(poster: Poster) {
  let stored = 0;
  let running = true;
  const done = (async () => {
    while (running) {
      const started = now();
      if (await poster.post(`storm ${stored + 1}`) !== undefined) stored++;
      await sleep(Math.max(0, started + POST_EVERY_MS - now()));
    }
  })();
  return {
    stored: () => stored,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

async function statusOf(readers: Readers[], upTo: number) {
  return addCounts(
    await Promise.all(
      readers.map((r) => r.ask<ReaderCounts>({ cmd: "status", upTo })),
    ),
  );
}

/** What is counted just before a storm's signal. */
interface Baseline {
  at: number;
  status: Awaited<ReturnType<typeof statusOf>>;
  overflows: number;
}

async function baseline(readers: Readers[]): Promise<Baseline> {
  const status = await statusOf(readers, 0);
  return { at: now(), status, overflows: listenOverflows() };
}

/** How much each count grew from `before` to `after`. */
function growth(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after).map(([k, n]) => [k, n - (before[k] ?? 0)]),
  );
}

/** Polls until all `n` are open and have id `upTo`, at most `ms`. */
async function timeRecovery(
  name: string,
  readers: Readers[],
  n: number,
  upTo: number,
  before: Baseline,
  servers: { stoppedMs: number; listeningMs: number },
  ms = 240_000,
): Promise<Storm> {
  const since = before.at;
  let status = before.status;
  const timeline: Storm["timeline"] = [];
  for (let i = 0; now() - since < ms; i++) {
    status = await statusOf(readers, upTo);
    if (status.caughtUp >= n) break;
    if (i % 8 === 0) {
      const { caughtUp, behind } = status;
      const ended = growth(before.status.ended, status.ended);
      timeline.push({
        s: Math.round((now() - since) / 100) / 10,
        caughtUp,
        behind,
        ended,
      });
      console.error(
        `${name}: ${caughtUp} of ${n} following, the others ${
          JSON.stringify(behind)
        }, streams ended since the signal ${JSON.stringify(ended)}, ${
          JSON.stringify(status.refused)
        } refused${
          status.silent.length > 0 ? `; silent: ${status.silent.join(" ")}` : ""
        }`,
      );
    }
    await sleep(250);
  }
  return {
    name,
    recoveredMs: now() - since,
    ...servers,
    recovered: status.caughtUp >= n,
    reconnects: status.reconnects - before.status.reconnects,
    refused: status.refused,
    refusedWithoutRetryAfter: status.refusedWithoutRetryAfter,
    ended: status.ended,
    listenOverflows: listenOverflows() - before.overflows,
    timeline,
  };
}

/** Runs both storms with `n` followers and writes scale_storms.md. */
export async function runStorms(
  n: number,
  perProcess: number,
  processes: number,
) {
  const redis = await freshRedis();
  const port = freePort();
  const start = () =>
    startOne({ target: "program", port, store: redis.url, args: PROGRAM_ARGS });
  const servers: RunningServer[] = [];
  for (let i = 0; i < processes; i++) servers.push(await start());
  const poster = new Poster(port);
  await poster.register();
  let first = 0;
  const readers = split(n, Math.max(3, Math.ceil(n / perProcess))).map(
    (count) => {
      const r = new Readers({ port, count, first, transport: "websocket" });
      first += count;
      return r;
    },
  );
  const t0 = now();
  const ready = addCounts(
    await Promise.all(readers.map((r) => r.next<ReaderCounts>(330_000))),
  );
  const connectedMs = now() - t0;
  if (ready.open < n) throw new Error(`only ${ready.open} of ${n} opened`);
  const posting = keepPosting(poster);
  await sleep(3000);
  const storms: Storm[] = [];

  // Storm 1: one process killed, restarted at once.
  const victim = servers.shift()!;
  const beforeKill1 = await baseline(readers);
  const beforeKill = posting.stored();
  await victim.stop("SIGKILL");
  const killed = now() - beforeKill1.at;
  servers.push(await start());
  storms.push(
    await timeRecovery(
      `kill -9 one of ${processes}`,
      readers,
      n,
      beforeKill,
      beforeKill1,
      { stoppedMs: killed, listeningMs: now() - beforeKill1.at },
    ),
  );
  await sleep(3000);

  // Storm 2: every process restarted at once.
  const beforeStop1 = await baseline(readers);
  const beforeStop = posting.stored();
  await Promise.all(servers.map((s) => s.stop("SIGTERM")));
  const stopped = now() - beforeStop1.at;
  servers.splice(0);
  servers.push(
    ...await Promise.all(Array.from({ length: processes }, start)),
  );
  storms.push(
    await timeRecovery(
      `SIGTERM all ${processes}, start all ${processes}`,
      readers,
      n,
      beforeStop,
      beforeStop1,
      { stoppedMs: stopped, listeningMs: now() - beforeStop1.at },
    ),
  );
  await sleep(3000);
  await posting.stop();
  const stored = posting.stored();
  await statusOf(readers, stored);
  await sleep(3000);
  const ids = Array.from({ length: stored }, (_, i) => i + 1);
  const reports = await Promise.all(
    readers.map((r) =>
      r.ask<ReaderReport>({ cmd: "report", sent: {}, ids }, 120_000)
    ),
  );
  const lost = reports.reduce((t, r) => t + r.lost, 0);
  const duplicated = reports.reduce((t, r) => t + r.duplicated, 0);
  const missed = reports.reduce((t, r) => t + r.missed, 0);
  await Promise.all(readers.map((r) => r.quit()));
  await Promise.all(servers.map((s) => s.stop("SIGKILL")));
  await redis.kill();
  write({
    n,
    processes,
    connectedMs,
    storms,
    stored,
    lost,
    duplicated,
    missed,
  });
}

function write(result: {
  n: number;
  processes: number;
  connectedMs: number;
  storms: Storm[];
  stored: number;
  lost: number;
  duplicated: number;
  missed: number;
}) {
  const lines = [
    `# \`deno task bench:scale --storms\` (${
      new Date().toISOString().slice(0, 16)
    } UTC)`,
    "",
    `${
      result.n.toLocaleString("en")
    } WebSocket followers over ${result.processes} program processes on one port (\`--reuse-port\`) and one Redis, \`${
      PROGRAM_ARGS.join(" ")
    }\`, every other cap as shipped; connected in ${
      (result.connectedMs / 1000).toFixed(1)
    } s. A post every ${
      POST_EVERY_MS / 1000
    } s throughout: ${result.stored} stored; at the end, at every follower, ${result.lost} lost, ${result.duplicated} duplicated, ${result.missed} reported missed in a gap.`,
    "",
    "| storm | signalled processes gone / successors listening at | every follower following again in | listen queue overflows | reconnects | refusals (status: count), since the start | refusals without Retry-After | how open streams ended, since the start |",
    "|---|--:|--:|--:|--:|---|--:|---|",
    ...result.storms.map((s) =>
      `| ${s.name} | ${(s.stoppedMs / 1000).toFixed(1)} s / ${
        (s.listeningMs / 1000).toFixed(1)
      } s | ${s.recovered ? "" : "not within "}${
        (s.recoveredMs / 1000).toFixed(1)
      } s | ${s.listenOverflows} | ${s.reconnects} | ${
        Object.entries(s.refused).map(([k, v]) => `${k}: ${v}`).join("; ") ||
        "none"
      } | ${s.refusedWithoutRetryAfter} | ${
        Object.entries(s.ended).map(([k, v]) => `${k}: ${v}`).join("; ") ||
        "none"
      } |`
    ),
    "",
    "```json",
    JSON.stringify(result),
    "```",
    "",
  ];
  Deno.writeTextFileSync(`${RESULTS}scale_storms.md`, lines.join("\n"));
  console.log(lines.join("\n"));
}
