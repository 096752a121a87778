/**
 * `deno task soak`: minutes of mixed load on the real program, with hostile
 * clients beside it (stalled, slow and truncated bodies) and, on Redis, the
 * Redis server killed and later frozen midway. Every second it samples the
 * server's RSS, its requests/s and the p99 of the load's latency; at the end
 * it says whether memory and latency came back after the faults.
 *
 * Not part of CI: it takes minutes. `--store=memory|redis`, `--minutes=N`.
 * @module
 */

import { flagsOf, usageError } from "./cli.ts";
import { percentile } from "./median.ts";
import { statusMb } from "./proc.ts";
import {
  type RedisServer,
  startRedis,
} from "../tests/_support/redis_server.ts";
import { type RunningServer, startServer } from "../tests/_support/program.ts";

const USAGE =
  `Usage: deno task soak [--store=memory|redis] [--minutes=N] [--workers=N]

Mixed load plus stalled, slow and truncated clients against the program for
N minutes (default 5); with --store=redis, Redis is killed at 40% of the run
(for 10 s) and frozen at 70% (for 5 s). Prints RSS, requests/s and p99 every
10 s and whether memory and latency came back.`;

const flags = flagsOf({
  store: { type: "string", default: "memory" },
  minutes: { type: "string", default: "5" },
  workers: { type: "string", default: "16" },
  hostile: { type: "string", default: "stalled,slow,truncated" },
}, USAGE);

if (flags.store !== "memory" && flags.store !== "redis") {
  usageError(`--store must be memory or redis (got "${flags.store}")`);
}
const minutes = Number(flags.minutes);
const workers = Number(flags.workers);
if (!(minutes > 0 && minutes <= 120)) {
  usageError("--minutes must be from 0 to 120");
}
if (!(Number.isInteger(workers) && workers >= 1 && workers <= 200)) {
  usageError("--workers must be a whole number from 1 to 200");
}

const hostile = flags.hostile.split(",").filter((kind) => kind !== "");
for (const kind of hostile) {
  if (!["stalled", "slow", "truncated"].includes(kind)) {
    usageError(`--hostile takes stalled, slow and truncated (got "${kind}")`);
  }
}
const durationMs = minutes * 60_000;
const redis: RedisServer | undefined = flags.store === "redis"
  ? await startRedis()
  : undefined;
const server: RunningServer = await startServer([
  "--quiet",
  "--body-timeout-ms=2000",
  ...(redis ? [`--store=${redis.url}`] : []),
]);
const port = Number(new URL(server.url).port);
const pid = server.process.pid;
const start = performance.now();
const elapsed = () => performance.now() - start;
const running = () => elapsed() < durationMs;

const rssMb = () => statusMb(pid, "VmRSS");

// ---- the load ----

let latencies: number[] = [];
let errors = 0;
const encoder = new TextEncoder();

async function timed(url: string, init?: RequestInit): Promise<number> {
  const begin = performance.now();
  try {
    const res = await fetch(url, {
      ...init,
      signal: AbortSignal.timeout(5000),
    });
    await res.arrayBuffer();
    latencies.push(performance.now() - begin);
    if (res.status >= 500) errors++;
    return res.status;
  } catch {
    errors++;
    latencies.push(performance.now() - begin);
    return 0;
  }
}

async function loadWorker(id: number): Promise<void> {
  let token: string | undefined;
  for (let i = 0; running(); i++) {
    if (token === undefined) {
      const res = await fetch(`${server.url}users`, {
        method: "POST",
        body: `soak${id}`,
      }).catch(() => undefined);
      const json = await res?.json().catch(() => undefined);
      token = json?.token;
      if (token === undefined) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
    }
    const headers = { "x-messaging-token": token };
    switch (i % 5) {
      case 0:
      case 1:
        await timed(server.url);
        break;
      case 2:
        await timed(server.url, {
          method: "POST",
          headers,
          body: JSON.stringify({ text: `m${i}` }),
        });
        break;
      case 3:
        await timed(`${server.url}quote`, {
          method: "POST",
          body: `Soak ${i}.`,
        });
        break;
      case 4:
        if ((await timed(`${server.url}users`, { headers })) === 401) {
          token = undefined;
        }
        break;
    }
  }
}

// ---- the hostile clients ----

async function rawClient(
  head: string,
  body: string,
  options: { dripMs?: number; halfClose?: boolean },
): Promise<void> {
  let conn: Deno.TcpConn;
  try {
    conn = await Deno.connect({ hostname: "127.0.0.1", port });
  } catch {
    return;
  }
  try {
    await conn.write(encoder.encode(head));
    if (options.dripMs) {
      for (const char of body) {
        if (!running()) break;
        await conn.write(encoder.encode(char));
        await new Promise((resolve) => setTimeout(resolve, options.dripMs));
      }
    } else {
      await conn.write(encoder.encode(body));
    }
    if (options.halfClose) await conn.closeWrite();
    const buffer = new Uint8Array(1024);
    const timer = setTimeout(() => conn.close(), 5000);
    try {
      await conn.read(buffer);
    } finally {
      clearTimeout(timer);
    }
  } catch {
    // The server cut it off: that is the point.
  } finally {
    try {
      conn.close();
    } catch {
      // Already closed.
    }
  }
}

async function hostileWorker(kind: "stalled" | "slow" | "truncated") {
  const pending = new Set<Promise<void>>();
  while (running()) {
    const client = kind === "stalled"
      ? rawClient(
        "POST /quote HTTP/1.1\r\nHost: x\r\nContent-Length: 65536\r\n\r\n",
        "A",
        {},
      )
      : kind === "slow"
      ? rawClient(
        "POST /quote HTTP/1.1\r\nHost: x\r\nContent-Length: 20\r\n\r\n",
        "Slowly but surely..!",
        { dripMs: 150 },
      )
      : rawClient(
        "POST /users HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n",
        "trunc",
        { halfClose: true },
      );
    pending.add(client);
    client.finally(() => pending.delete(client));
    // About 50 stalled, 20 slow and 20 truncated clients a second.
    await new Promise((resolve) =>
      setTimeout(resolve, kind === "stalled" ? 20 : 50)
    );
  }
  await Promise.allSettled(pending);
}

// ---- the faults ----

const events: string[] = [];
async function faults(): Promise<void> {
  if (!redis) return;
  const at = async (fraction: number) => {
    while (elapsed() < durationMs * fraction) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  await at(0.4);
  events.push(`${(elapsed() / 1000).toFixed(0)}s redis killed`);
  await redis.kill();
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  await redis.restart();
  events.push(`${(elapsed() / 1000).toFixed(0)}s redis restarted`);
  await at(0.7);
  events.push(`${(elapsed() / 1000).toFixed(0)}s redis frozen`);
  redis.pause();
  await new Promise((resolve) => setTimeout(resolve, 5000));
  redis.resume();
  events.push(`${(elapsed() / 1000).toFixed(0)}s redis thawed`);
}

// ---- sampling ----

interface Sample {
  second: number;
  rssMb: number;
  requests: number;
  p99Ms: number;
  errors: number;
}
const samples: Sample[] = [];
function p99(values: number[]): number {
  if (values.length === 0) return 0;
  return percentile(values.toSorted((a, b) => a - b), 0.99);
}
const sampler = setInterval(() => {
  const taken = latencies;
  latencies = [];
  samples.push({
    second: Math.round(elapsed() / 1000),
    rssMb: rssMb(),
    requests: taken.length,
    p99Ms: p99(taken),
    errors,
  });
  errors = 0;
  const last = samples.at(-1)!;
  if (last.second % 10 === 0) {
    console.log(
      `${String(last.second).padStart(4)} s  RSS ${
        last.rssMb.toFixed(1).padStart(6)
      } MB  ${String(last.requests).padStart(6)} req/s  p99 ${
        last.p99Ms.toFixed(1).padStart(7)
      } ms  5xx or failed ${last.errors}`,
    );
  }
}, 1000);

console.log(
  `soak: ${minutes} min, store ${flags.store}, ${workers} load workers, hostile clients: ${
    hostile.join(", ") || "none"
  }${redis ? ", Redis killed at 40% and frozen at 70%" : ""}`,
);
const baselineRss = rssMb();
await Promise.all([
  ...Array.from({ length: workers }, (_, i) => loadWorker(i)),
  ...hostile.map((kind) =>
    hostileWorker(kind as "stalled" | "slow" | "truncated")
  ),
  faults(),
]);
clearInterval(sampler);

const window = (from: number, to: number) =>
  samples.filter((s) => s.second > from && s.second <= to);
const totalSeconds = samples.at(-1)?.second ?? 0;
const early = window(10, 40);
const late = window(totalSeconds - 30, totalSeconds);
const median = (values: number[]) =>
  values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const peakRss = Math.max(...samples.map((s) => s.rssMb));
const earlyRss = median(early.map((s) => s.rssMb));
const lateRss = median(late.map((s) => s.rssMb));
const earlyP99 = median(early.map((s) => s.p99Ms));
const lateP99 = median(late.map((s) => s.p99Ms));
const midRss = median(
  window(totalSeconds / 2 - 15, totalSeconds / 2 + 15).map((s) => s.rssMb),
);
const slope = (lateRss - midRss) / Math.max(1, totalSeconds / 2);
const memoryBack = lateRss <= earlyRss * 1.1 + 5;
const latencyBack = lateP99 <= earlyP99 * 1.5 + 2;

for (const event of events) console.log(`event: ${event}`);
console.log(
  `RSS: start ${baselineRss.toFixed(1)} MB, early ${
    earlyRss.toFixed(1)
  } MB, peak ${peakRss.toFixed(1)} MB, last 30 s ${lateRss.toFixed(1)} MB (${
    (slope * 60).toFixed(1)
  } MB/min over the second half): memory came back: ${
    memoryBack ? "yes" : "NO"
  }`,
);
console.log(
  `p99: early ${earlyP99.toFixed(1)} ms, last 30 s ${
    lateP99.toFixed(1)
  } ms: latency came back: ${latencyBack ? "yes" : "NO"}`,
);
const code = await server.stop();
console.log(`server exit code on SIGTERM: ${code}`);
await redis?.kill();
