/**
 * `deno task bench`: the HTTP load benchmark. Starts the two ceiling servers,
 * the two peers a user would pick instead (`bench/peers/`: plain `Deno.serve`,
 * twice to show the run's noise, and Hono) and the real program (quiet, and
 * with its request log) side by side, drives each with the same `wrk` load,
 * alternating servers round by round so drift hits all alike, and reports
 * requests/s, p99 latency, server CPU per request and the ratios to the
 * matching ceiling and to the peers, then checks the targets, as a Markdown
 * table, a JSON file and an SVG chart under `bench/results/`.
 *
 * wrk runs on core 0 and every server on core 1 (`taskset`), so one cannot
 * steal the other's cycles.
 * @module
 */

import { flagsOf, usageError } from "./cli.ts";
import {
  type RedisServer,
  startRedis,
} from "../tests/_support/redis_server.ts";
import { type RunningServer, startServer } from "../tests/_support/program.ts";
import { renderChart } from "./chart.ts";
import { median } from "./median.ts";
import { CLK_TCK, cpuTicks, statusMb } from "./proc.ts";
import { runWrk, type WrkRun } from "./wrk.ts";
import { roundOrder } from "./round_order.ts";

interface Scenario {
  name: string;
  kind: "GET" | "POST";
  /** The wrk Lua script; `NONCE` is replaced by a value unique to each run. */
  script: (token: string) => string;
}

const luaString = (s: string) => JSON.stringify(s);

/**
 * The rate-limited targets spend an allowance on every write, but one the
 * bench's single client never exhausts (a burst of 10^9): a refused write
 * would be a 429, not throughput.
 */
const RATE_LIMIT_NEVER_REACHED = "--rate-limit=1000000000/0.001";

const SCENARIOS: Scenario[] = [
  { name: "get_messages", kind: "GET", script: () => `wrk.path = "/"` },
  { name: "get_quote", kind: "GET", script: () => `wrk.path = "/quote"` },
  {
    name: "list_users",
    kind: "GET",
    script: (token) =>
      `wrk.path = "/users"\nwrk.headers["X-Messaging-Token"] = ${
        luaString(token)
      }`,
  },
  {
    name: "post_message",
    kind: "POST",
    script: (token) =>
      `wrk.method = "POST"\nwrk.path = "/"\nwrk.body = ${
        luaString('{"text":"Hello, bench!","color":"red"}')
      }\nwrk.headers["X-Messaging-Token"] = ${luaString(token)}`,
  },
  {
    name: "post_quote",
    kind: "POST",
    script: () =>
      `wrk.method = "POST"\nwrk.path = "/quote"\nwrk.body = "Benchmarks never lie?"`,
  },
  {
    name: "register",
    kind: "POST",
    // A name unique to the run, the thread and the request, so every
    // request registers a new user.
    script: () =>
      `local n = 0\nlocal id = tostring(math.random(1, 1e9))\nrequest = function()\n  n = n + 1\n  return wrk.format("POST", "/users", nil, "NONCE_" .. id .. "_" .. n)\nend`,
  },
];

interface Target {
  name: string;
  args: string[];
  entry?: string;
  ceiling?: boolean;
  /** Its standard error (a request log) goes to /dev/null. */
  logs?: boolean;
  env?: Record<string, string>;
  workers?: number;
  /** Extra `deno run` flags. */
  denoFlags?: string[];
}

interface Run extends WrkRun {
  cpuUsPerReq: number;
}

interface Row {
  scenario: string;
  target: string;
  rps: number;
  p99ms: number;
  cpuUsPerReq: number;
  rpsRatio?: number;
  cpuRatio?: number;
  /** CPU per request ÷ the plain peer's, and ÷ Hono's. */
  cpuVsPlain?: number;
  cpuVsHono?: number;
  /** requests/s ÷ the memory store's, for the other stores. */
  memoryRatio?: number;
  peakRssMb: number;
  rounds: Run[];
}

const USAGE = `Usage: deno task bench [flags]
  --duration=S      seconds per measured run (default 3)
  --warmup=S        seconds of unmeasured load before each scenario (default 1)
  --rounds=N        measured runs per scenario and server; medians are reported (default 3)
  --connections=N   wrk connections (default 50)
  --scenarios=a,b   some of: ${SCENARIOS.map((s) => s.name).join(", ")}
  --store=URL       also run the program with this --store: redis://HOST:PORT/DB, or
                    redis to start a throw-away redis-server (apt-get install redis-server)
  --workers=N       also run serve.ts under deno serve --parallel with N workers on
                    that store (unpinned: the workers need every core)
  --baseline=REF    also run the program as of git REF, to judge a change in the same run
                    (on the --store given, if any)
`;

const flags = flagsOf({
  duration: { type: "string", default: "3" },
  warmup: { type: "string", default: "1" },
  rounds: { type: "string", default: "3" },
  connections: { type: "string", default: "50" },
  scenarios: {
    type: "string",
    default: SCENARIOS.map((s) => s.name).join(","),
  },
  store: { type: "string" },
  workers: { type: "string" },
  baseline: { type: "string" },
}, USAGE);
// wrk takes whole seconds: a fraction made it fail mid-run.
const least = { duration: 1, warmup: 0, rounds: 1, connections: 1 };
for (
  const [name, min] of Object.entries(least) as [keyof typeof least, number][]
) {
  const value = Number(flags[name]);
  if (!(Number.isSafeInteger(value) && value >= min && value <= 100_000)) {
    usageError(
      `--${name} must be a whole number from ${min} to 100000 (got "${
        flags[name]
      }")`,
    );
  }
}
if (flags.workers !== undefined && !/^[1-9]\d?$/.test(flags.workers)) {
  usageError(
    `--workers must be a whole number from 1 to 99 (got "${flags.workers}")`,
  );
}
const unknown = flags.scenarios.split(",").filter((name) =>
  !SCENARIOS.some((s) => s.name === name)
);
if (unknown.length > 0) {
  usageError(`--scenarios: no scenario named ${unknown.join(", ")}`);
}

const OUT = new URL("./results/", import.meta.url).pathname;
const chosen = flags.scenarios.split(",").map((name) => {
  const scenario = SCENARIOS.find((s) => s.name === name);
  if (!scenario) throw new Error(`unknown scenario ${name}`);
  return scenario;
});

function requireTool(name: string, install: string): void {
  const found = new Deno.Command("sh", { args: ["-c", `command -v ${name}`] })
    .outputSync().success;
  if (!found) {
    console.error(`error: ${name} is not installed: ${install}`);
    Deno.exit(1);
  }
}
requireTool("wrk", "apt-get install wrk");
const pin = (core: number) =>
  new Deno.Command("sh", { args: ["-c", "command -v taskset"] }).outputSync()
      .success && navigator.hardwareConcurrency >= 2
    ? ["taskset", "-c", String(core)]
    : [];

let nonce = 0;
/** One wrk run of `script` (its `NONCE` made unique) against `url`, wrk on core 0. */
const wrk = (url: string, script: string, seconds: number) =>
  runWrk({
    url,
    script: script.replaceAll("NONCE", `n${++nonce}`),
    seconds,
    connections: Number(flags.connections),
    prefix: pin(0),
  });

async function setUp(url: string): Promise<string> {
  const register = async (name: string) => {
    const res = await fetch(`${url}users`, { method: "POST", body: name });
    if (res.status !== 200) {
      throw new Error(`setup: register ${name}: ${res.status}`);
    }
    return (await res.json()).token as string;
  };
  const token = await register("bench");
  for (let i = 0; i < 5; i++) {
    const res = await fetch(url, {
      method: "POST",
      headers: { "x-messaging-token": token },
      body: JSON.stringify({
        text: `Message ${i} of the benchmark`,
        color: i % 2 ? "red" : "black",
      }),
    });
    await res.body?.cancel();
  }
  for (let batch = 0; batch < 10; batch++) {
    await Promise.all(
      Array.from({ length: 100 }, (_, i) => register(`user${batch * 100 + i}`)),
    );
  }
  return token;
}

const peer = (name: string) =>
  new URL(`./peers/${name}.ts`, import.meta.url).pathname;
const targets: Target[] = [
  {
    name: "ceiling",
    args: [],
    entry: new URL("./ceiling.ts", import.meta.url).pathname,
    ceiling: true,
  },
  {
    name: "ceiling-read",
    args: ["--read"],
    entry: new URL("./ceiling.ts", import.meta.url).pathname,
    ceiling: true,
  },
  { name: "plain", args: [], entry: peer("plain") },
  // The same server twice: how far apart two identical servers land in this
  // run is the noise every comparison in it is read against.
  { name: "plain, again", args: [], entry: peer("plain") },
  { name: "hono", args: [], entry: peer("hono") },
  { name: "memory", args: ["--quiet", "--max-users=100000000"] },
  { name: "memory, logged", args: ["--max-users=100000000"], logs: true },
  // Every write spends an allowance so large that none is refused: what the
  // limiter itself costs.
  {
    name: "memory, rate-limited",
    args: ["--quiet", "--max-users=100000000", RATE_LIMIT_NEVER_REACHED],
  },
];
if (flags.workers && !flags.store) {
  console.error(
    "error: --workers needs --store: workers share state only through Redis",
  );
  Deno.exit(2);
}
let ownRedis: RedisServer | undefined;
if (flags.store) {
  if (flags.store === "redis") ownRedis = await startRedis();
  const store = ownRedis?.url ?? flags.store;
  // A prefix per target: each sets up its own users and messages.
  const redisArgs = () => [
    "--quiet",
    "--max-users=100000000",
    `--store=${store}`,
    `--redis-prefix=bench:${crypto.randomUUID()}:`,
  ];
  targets.push({ name: "redis", args: redisArgs() }, {
    name: "redis, rate-limited",
    args: [...redisArgs(), RATE_LIMIT_NEVER_REACHED],
  });
  if (flags.workers) {
    targets.push({
      name: `redis, ${flags.workers} workers`,
      args: [],
      workers: Number(flags.workers),
      env: {
        LMS_STORE: store,
        LMS_MAX_USERS: "100000000",
        LMS_QUIET: "1",
        LMS_REDIS_PREFIX: `bench:${crypto.randomUUID()}:`,
      },
    });
  }
}

if (flags.baseline) {
  // The program as it was at REF, checked out beside the tree, so a change
  // is measured against its predecessor under the same load and noise.
  const dir = await Deno.makeTempDir({ dir: OUT, suffix: ".tmp" });
  const git = (...args: string[]) =>
    new Deno.Command("git", { args, stdout: "null" }).outputSync();
  if (!git("worktree", "add", "--detach", dir, flags.baseline).success) {
    throw new Error(`cannot check out ${flags.baseline}`);
  }
  addEventListener("unload", () => {
    git("worktree", "remove", "--force", dir);
  });
  // With --store, the baseline runs on that store too: that is what is judged.
  const store = ownRedis?.url ?? flags.store;
  targets.push({
    name: `baseline ${flags.baseline}`,
    args: [
      "--quiet",
      "--max-users=100000000",
      ...(store
        ? [`--store=${store}`, `--redis-prefix=bench:${crypto.randomUUID()}:`]
        : []),
    ],
    entry: `${dir}/main.ts`,
    // A baseline from before the Redis store's plain import loads its
    // module by a URL built at run time, which needs read access to it.
    denoFlags: [`--allow-read=${dir}/src/store/redis`],
  });
}
await Deno.mkdir(OUT, { recursive: true });
const servers = new Map<string, RunningServer>();
for (const target of targets) {
  servers.set(
    target.name,
    await startServer(target.args, target.env, {
      entry: target.entry,
      prefix: target.workers ? [] : pin(1),
      workers: target.workers,
      discardStderr: target.logs,
      denoFlags: target.denoFlags,
    }),
  );
}
const tokens = new Map<string, string>();
for (const target of targets) {
  const url = servers.get(target.name)!.url;
  tokens.set(target.name, target.ceiling ? "bench-0000" : await setUp(url));
}

const rows: Row[] = [];
const duration = Number(flags.duration);
const rounds = Number(flags.rounds);
let failed = false;
try {
  for (const scenario of chosen) {
    const ceilingName = scenario.kind === "GET" ? "ceiling" : "ceiling-read";
    const runs = new Map<string, Run[]>(targets.map((t) => [t.name, []]));
    for (const target of targets) {
      const server = servers.get(target.name)!;
      await wrk(
        server.url,
        scenario.script(tokens.get(target.name)!),
        Number(flags.warmup),
      );
    }
    for (let round = 0; round < rounds; round++) {
      for (const target of roundOrder(targets, round, rounds)) {
        const server = servers.get(target.name)!;
        const before = cpuTicks(server.process.pid);
        const run = await wrk(
          server.url,
          scenario.script(tokens.get(target.name)!),
          duration,
        );
        const cpuUs = (cpuTicks(server.process.pid) - before) * (1e6 / CLK_TCK);
        runs.get(target.name)!.push({
          ...run,
          cpuUsPerReq: cpuUs / run.requests,
        });
        if (run.bad > 0) {
          failed = true;
          console.error(
            `${scenario.name} on ${target.name}: ${run.bad} unexpected statuses or socket errors`,
          );
        }
      }
    }
    const base = runs.get(ceilingName)!;
    const baseRps = median(base.map((r) => r.rps));
    const baseCpu = median(base.map((r) => r.cpuUsPerReq));
    for (const target of targets) {
      const rs = runs.get(target.name)!;
      const rps = median(rs.map((r) => r.rps));
      const cpu = median(rs.map((r) => r.cpuUsPerReq));
      const row: Row = {
        scenario: scenario.name,
        target: target.name,
        rps,
        p99ms: median(rs.map((r) => r.p99ms)),
        cpuUsPerReq: cpu,
        peakRssMb: statusMb(servers.get(target.name)!.process.pid, "VmHWM"),
        rounds: rs,
      };
      if (!target.ceiling) {
        row.rpsRatio = rps / baseRps;
        row.cpuRatio = cpu / baseCpu;
      }
      if (!target.ceiling || target.name === ceilingName) rows.push(row);
    }
    console.error(`done: ${scenario.name}`);
  }
} finally {
  for (const server of servers.values()) await server.stop();
  await ownRedis?.kill();
}
const rowOf = (scenario: string, target: string) =>
  rows.find((r) => r.scenario === scenario && r.target === target);
for (const row of rows) {
  const memory = rowOf(row.scenario, "memory");
  if (
    memory && row.rpsRatio !== undefined && row !== memory &&
    row.target.startsWith("redis")
  ) {
    row.memoryRatio = row.rps / memory.rps;
  }
  if (row.rpsRatio !== undefined) {
    const plain = rowOf(row.scenario, "plain");
    const hono = rowOf(row.scenario, "hono");
    if (plain && row !== plain) {
      row.cpuVsPlain = row.cpuUsPerReq / plain.cpuUsPerReq;
    }
    if (hono && row !== hono) {
      row.cpuVsHono = row.cpuUsPerReq / hono.cpuUsPerReq;
    }
  }
}

/** The targets of issue 14, judged on this run's medians: one line each, met or missed. */
function verdicts(): string[] {
  const lines: string[] = [];
  const judge = (ok: boolean, text: string) =>
    lines.push(`- ${ok ? "met" : "**missed**"}: ${text}`);
  const f = (n: number, d = 2) => n.toFixed(d);
  for (const scenario of chosen) {
    const own = rowOf(scenario.name, "memory");
    if (!own) continue;
    const name = scenario.name;
    for (const peerName of ["plain", "hono"]) {
      const other = rowOf(name, peerName);
      if (!other) continue;
      judge(
        own.cpuUsPerReq < other.cpuUsPerReq && own.rps >= other.rps,
        `${name}: CPU ${f(own.cpuUsPerReq)} µs < ${peerName} ${
          f(other.cpuUsPerReq)
        } µs, ${fmt(own.rps)} req/s ≥ ${fmt(other.rps)}`,
      );
    }
    const plain = rowOf(name, "plain");
    const plainAgain = rowOf(name, "plain, again");
    if (plain && plainAgain) {
      lines.push(
        `- noise: ${name}: two copies of plain, ${f(plain.cpuUsPerReq)} and ${
          f(plainAgain.cpuUsPerReq)
        } µs, differ by ${
          f(Math.abs(plain.cpuUsPerReq - plainAgain.cpuUsPerReq))
        } µs`,
      );
    }
    const limit = scenario.kind === "GET" ? 1.10 : 1.05;
    if (own.cpuRatio !== undefined) {
      judge(
        own.cpuRatio <= limit,
        `${name}: CPU ÷ ceiling ${f(own.cpuRatio, 3)} ≤ ${f(limit)}`,
      );
    }
    judge(
      own.p99ms <= 1.5 || (plain !== undefined && own.p99ms <= plain.p99ms),
      `${name}: p99 ${f(own.p99ms)} ms ≤ 1.5 ms or ≤ plain's ${
        plain ? f(plain.p99ms) : "?"
      } ms`,
    );
    const logged = rowOf(name, "memory, logged");
    if (logged) {
      judge(
        logged.cpuUsPerReq <= own.cpuUsPerReq * 1.10,
        `${name}: with the request log, CPU ${
          f(logged.cpuUsPerReq)
        } µs ≤ 1.10 × ${f(own.cpuUsPerReq)} µs`,
      );
    }
    const redis = rowOf(name, "redis");
    if (redis?.memoryRatio !== undefined) {
      const least = scenario.kind === "GET" ? 0.9 : 0.5;
      judge(
        redis.memoryRatio >= least,
        `${name}: Redis req/s ÷ memory ${f(redis.memoryRatio, 3)} ≥ ${least}`,
      );
    }
  }
  return lines;
}

const fmt = (n: number | undefined, digits = 0) =>
  n === undefined ? "" : n.toLocaleString("en-US", {
    maximumFractionDigits: digits,
    minimumFractionDigits: digits,
  });
const table = [
  "| scenario | server | requests/s | p99 ms | CPU µs/req | CPU ÷ ceiling | CPU ÷ plain | CPU ÷ Hono | req/s ÷ ceiling | req/s ÷ memory | peak RSS MB |",
  "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
  ...rows.map((r) =>
    `| ${r.scenario} | ${r.target} | ${fmt(r.rps)} | ${fmt(r.p99ms, 2)} | ${
      fmt(r.cpuUsPerReq, 2)
    } | ${fmt(r.cpuRatio, 3)} | ${fmt(r.cpuVsPlain, 3)} | ${
      fmt(r.cpuVsHono, 3)
    } | ${fmt(r.rpsRatio, 3)} | ${fmt(r.memoryRatio, 3)} | ${
      fmt(r.peakRssMb, 1)
    } |`
  ),
  "",
  "Targets (the program is `memory`: the memory store, `--quiet`):",
  "",
  ...verdicts(),
].join("\n");

const deno = Deno.version.deno;
const settings = {
  duration,
  rounds,
  warmup: Number(flags.warmup),
  connections: Number(flags.connections),
  wrkThreads: 1,
  pinned: pin(0).length > 0,
};
const header =
  `Deno ${deno}, wrk -t1 -c${settings.connections} -d${duration}s, ${rounds} rounds (medians), ${
    settings.pinned ? "wrk on core 0, servers on core 1" : "not pinned"
  }, ${new Date().toISOString()}`;
console.log(`${header}\n\n${table}`);

// Only the newest run is kept: older ones stay in git history rather than
// piling up beside it.
const json = JSON.stringify(
  { date: new Date().toISOString(), deno, settings, rows },
  null,
  2,
);
await Deno.writeTextFile(`${OUT}latest.json`, json + "\n");
await Deno.writeTextFile(`${OUT}latest.md`, `${header}\n\n${table}\n`);
await Deno.writeTextFile(
  `${OUT}latest.svg`,
  renderChart(rows.filter((r) => r.rpsRatio !== undefined)),
);
console.error(`written: ${OUT}latest.{md,json,svg}`);
if (failed) {
  console.error(
    "error: some runs saw unexpected statuses; their figures are not throughput",
  );
  Deno.exit(1);
}
