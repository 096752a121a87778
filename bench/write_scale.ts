/**
 * `deno task bench:write-scale`: how posting scales with processes on one
 * Redis. For each count of processes (`--processes=1,2,4`), that many
 * program processes share one port (`--reuse-port`) and a throw-away
 * `redis-server`, and so do as many of the plain peer
 * (`bench/peers/plain_redis.ts`: `Deno.serve` writing to the same Redis
 * with the same client); `wrk` posts messages through the port, the two
 * taking turns round by round. Reported per count: posts/s, p99, the
 * processes' CPU and Redis's CPU per post, and the commands each post sends
 * to Redis in round trips, counted with `MONITOR` over 100 posts one at a
 * time.
 * Everything shares the machine's cores: CPU per post is the figure to
 * read, posts/s says where the machine ran out.
 * @module
 */

import { flagsOf, usageError } from "./cli.ts";
import { median } from "./median.ts";
import { CLK_TCK, cpuTicks } from "./proc.ts";
import { runWrk } from "./wrk.ts";
import { startRedis } from "../tests/_support/redis_server.ts";
import {
  freePort,
  type RunningServer,
  startServer,
} from "../tests/_support/program.ts";

const USAGE =
  `Usage: deno task bench:write-scale [--processes=1,2,4] [--duration=5] [--rounds=3] [--connections=64] [--out=bench/results/write_scale.md]`;
const flags = flagsOf({
  processes: { type: "string", default: "1,2,4" },
  duration: { type: "string", default: "5" },
  rounds: { type: "string", default: "3" },
  connections: { type: "string", default: "64" },
  out: { type: "string", default: "bench/results/write_scale.md" },
}, USAGE);
const counts = flags.processes.split(",").map(Number);
for (const [name, value] of Object.entries(flags)) {
  if (name === "out") continue;
  const numbers = name === "processes" ? counts : [Number(value)];
  const most = name === "processes" ? 64 : 100_000;
  // wrk runs two threads, each with a connection at least.
  const least = name === "connections" ? 2 : 1;
  if (
    !numbers.every((n) => Number.isSafeInteger(n) && n >= least && n <= most)
  ) {
    usageError(
      `--${name} must be whole numbers from ${least} to ${most} (got ${value})`,
    );
  }
}

// A smoke run can write elsewhere than the published figures.
const OUT = flags.out;
const PLAIN = new URL("./peers/plain_redis.ts", import.meta.url).pathname;
const POSTS_COUNTED = 100;

interface Side {
  name: "program" | "plain";
  servers: RunningServer[];
  url: string;
  token: string;
}

interface Row {
  processes: number;
  side: string;
  postsPerSecond: number;
  p99ms: number;
  cpuUsPerPost: number;
  redisUsPerPost: number;
  roundTripsPerPost: number;
  bad: number;
}

const redis = await startRedis();
const redisCpuUs = async () => {
  const info = await redis.cli("info", "cpu");
  const field = (name: string) =>
    Number(info.match(new RegExp(`${name}:([\\d.]+)`))?.[1] ?? NaN);
  return (field("used_cpu_sys") + field("used_cpu_user")) * 1e6;
};

/** `count` processes of one side on one fresh port, a user registered. */
async function startSide(name: Side["name"], count: number): Promise<Side> {
  const port = freePort();
  const prefix = `bench:${crypto.randomUUID()}:`;
  const servers: RunningServer[] = [];
  for (let i = 0; i < count; i++) {
    servers.push(
      name === "program"
        ? await startServer([
          `--port=${port}`,
          "--reuse-port",
          `--store=${redis.url}`,
          `--redis-prefix=${prefix}`,
          "--quiet",
        ])
        : await startServer(
          [`--port=${port}`, `--store=${redis.url}`, `--prefix=${prefix}`],
          {},
          { entry: PLAIN },
        ),
    );
  }
  const url = `http://127.0.0.1:${port}/`;
  const res = await fetch(`${url}users`, { method: "POST", body: "bench" });
  if (res.status !== 200) throw new Error(`${name}: register ${res.status}`);
  const { token } = await res.json();
  return { name, servers, url, token };
}

const postScript = (token: string) =>
  `wrk.method = "POST"\nwrk.path = "/"\nwrk.body = ${
    JSON.stringify(JSON.stringify({ text: "Hello, bench!", color: "red" }))
  }\nwrk.headers["X-Messaging-Token"] = ${JSON.stringify(token)}`;

function post(side: Side): Promise<Response> {
  return fetch(side.url, {
    method: "POST",
    headers: { "x-messaging-token": side.token },
    body: JSON.stringify({ text: "Counted.", color: "black" }),
  });
}

/**
 * Round trips to Redis per post: the commands `MONITOR` shows from
 * clients (not from scripts, marked `lua`; a `MULTI` ... `EXEC` as one)
 * while 100 posts go one at a time, less what the same time idle brings
 * (heartbeats, sweeps).
 */
async function roundTripsPerPost(side: Side): Promise<number> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: redis.port });
  await conn.write(new TextEncoder().encode("MONITOR\r\n"));
  let text = "";
  const reading = (async () => {
    for await (const chunk of conn.readable) {
      text += new TextDecoder().decode(chunk);
    }
  })().catch(() => {});
  // A MULTI ... EXEC goes as one round trip, so counts once.
  const roundTrips = () => {
    const inMulti = new Set<string>();
    let count = 0;
    for (const line of text.split("\n")) {
      const [, client, command] = line.match(/\[\d+ ([^\]]+)\] "(\w+)"/) ?? [];
      if (client === undefined || client === "lua") continue;
      if (inMulti.has(client)) {
        if (command === "EXEC") inMulti.delete(client);
        continue;
      }
      if (command === "MULTI") inMulti.add(client);
      count++;
    }
    return count;
  };
  await new Promise((r) => setTimeout(r, 200));
  const start = roundTrips();
  let t = performance.now();
  for (let i = 0; i < POSTS_COUNTED; i++) {
    const res = await post(side);
    await res.body?.cancel();
    if (res.status !== 200) throw new Error(`${side.name}: post ${res.status}`);
  }
  const busyMs = performance.now() - t;
  await new Promise((r) => setTimeout(r, 200));
  const busy = roundTrips() - start;
  t = performance.now();
  await new Promise((r) => setTimeout(r, busyMs + 200));
  const idle = (roundTrips() - start - busy) * busyMs /
    (performance.now() - t);
  conn.close();
  await reading;
  return Math.max(0, busy - idle) / POSTS_COUNTED;
}

async function measure(side: Side, seconds: number) {
  const pids = side.servers.map((s) => s.process.pid);
  const ticks = () => pids.reduce((sum, pid) => sum + cpuTicks(pid), 0);
  const before = ticks();
  const redisBefore = await redisCpuUs();
  const run = await runWrk({
    url: side.url,
    script: postScript(side.token),
    seconds,
    connections: Number(flags.connections),
    threads: 2,
  });
  const cpuUs = (ticks() - before) * (1e6 / CLK_TCK);
  const redisUs = await redisCpuUs() - redisBefore;
  return {
    ...run,
    cpuUsPerPost: cpuUs / run.requests,
    redisUsPerPost: redisUs / run.requests,
  };
}

const rows: Row[] = [];
try {
  for (const count of counts) {
    const sides = [
      await startSide("program", count),
      await startSide("plain", count),
    ];
    try {
      for (const side of sides) await measure(side, 1);
      const runs = new Map(
        sides.map((s) => [s.name, [] as Awaited<ReturnType<typeof measure>>[]]),
      );
      for (let round = 0; round < Number(flags.rounds); round++) {
        const order = round % 2 ? [...sides].reverse() : sides;
        for (const side of order) {
          runs.get(side.name)!.push(
            await measure(side, Number(flags.duration)),
          );
        }
      }
      for (const side of sides) {
        const got = runs.get(side.name)!;
        const of = (pick: (r: typeof got[number]) => number) =>
          median(got.map(pick));
        rows.push({
          processes: count,
          side: side.name,
          postsPerSecond: of((r) => r.rps),
          p99ms: of((r) => r.p99ms),
          cpuUsPerPost: of((r) => r.cpuUsPerPost),
          redisUsPerPost: of((r) => r.redisUsPerPost),
          roundTripsPerPost: await roundTripsPerPost(side),
          bad: got.reduce((sum, r) => sum + r.bad, 0),
        });
        console.error(JSON.stringify(rows.at(-1)));
      }
    } finally {
      for (const side of sides) {
        await Promise.all(side.servers.map((s) => s.stop()));
      }
    }
  }
} finally {
  await redis.kill();
}

const f = (n: number, digits = 0) =>
  n.toLocaleString("en-US", {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
const plainOf = (count: number) =>
  rows.find((r) => r.processes === count && r.side === "plain")!;
const table = [
  "| processes | server | posts/s | p99 ms | CPU µs/post | ÷ plain | Redis CPU µs/post | Redis round trips/post | errors |",
  "|--:|---|--:|--:|--:|--:|--:|--:|--:|",
  ...rows.map((r) =>
    `| ${r.processes} | ${r.side} | ${f(r.postsPerSecond)} | ${
      f(r.p99ms, 2)
    } | ${f(r.cpuUsPerPost, 1)} | ${
      r.side === "plain"
        ? ""
        : f(r.cpuUsPerPost / plainOf(r.processes).cpuUsPerPost, 3)
    } | ${f(r.redisUsPerPost, 1)} | ${f(r.roundTripsPerPost, 2)} | ${r.bad} |`
  ),
].join("\n");
const header =
  `Deno ${Deno.version.deno}, redis-server, wrk -t2 -c${flags.connections} -d${flags.duration}s, ${flags.rounds} rounds (medians), ${navigator.hardwareConcurrency} cores shared by all, ${
    new Date().toISOString()
  }`;
await Deno.writeTextFile(OUT, `${header}\n\n${table}\n`);
console.log(`${header}\n\n${table}`);
if (rows.some((r) => r.bad > 0)) {
  console.error("error: some posts were not answered 200");
  Deno.exit(1);
}
