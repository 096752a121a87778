/**
 * `deno task bench:redis-writes`: what one write costs on the Redis store,
 * without HTTP: a `RedisStore` in this process writes N times, 50 (or
 * `--batch`) at a time, to a throw-away `redis-server`, and the bench reports this
 * process's CPU per write, Redis's own time per script call (`INFO
 * commandstats`), writes per second, and how many keys of write records
 * are left in Redis once the store has had time to delete them. With
 * `--replicas=N`, N replicas follow the server and every write waits for
 * them (`waitReplicas`, Redis's `WAIT`): the bench also reports how many
 * `WAIT`s were sent per write. Run the same file in a checkout of
 * another commit (with that commit's `deno.json`) to compare.
 * @module
 */

import { cpuUsage } from "node:process";
import { flagsOf, usageError } from "./cli.ts";
import { median } from "./median.ts";
import { startRedis } from "../tests/_support/redis_server.ts";
import { RedisStore } from "../src/store/redis/redis_store.ts";

const USAGE =
  `Usage: deno task bench:redis-writes [--writes=20000] [--rounds=5] [--ops=register,message,quote] [--replicas=0] [--batch=50]`;

const flags = flagsOf({
  writes: { type: "string", default: "20000" },
  rounds: { type: "string", default: "5" },
  ops: { type: "string", default: "register,message,quote" },
  replicas: { type: "string", default: "0" },
  batch: { type: "string", default: "50" },
}, USAGE);
const writes = Number(flags.writes);
const rounds = Number(flags.rounds);
const ops = flags.ops.split(",");
const replicaCount = Number(flags.replicas);
const batchSize = Number(flags.batch);
const OPS = ["register", "message", "quote"];
if (
  !(Number.isInteger(writes) && writes >= 50 && writes <= 1_000_000) ||
  !(Number.isInteger(rounds) && rounds >= 1 && rounds <= 100) ||
  !(Number.isInteger(replicaCount) && replicaCount >= 0 &&
    replicaCount <= 4) ||
  !(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= 50) ||
  ops.some((op) => !OPS.includes(op))
) {
  usageError("bad --writes, --rounds, --ops, --replicas or --batch");
}

const redis = await startRedis();
const replicas = [];
for (let i = 0; i < replicaCount; i++) {
  replicas.push(await startRedis({ replicaOf: redis.port }));
}
const stat = async (section: string, pattern: RegExp) =>
  Number(pattern.exec(await redis.cli("INFO", section))?.[1] ?? NaN);

/** What one round measured. */
interface Round {
  /** CPU of this process per write, µs. */
  cpuUs: number;
  /** Redis's time per script call, µs. */
  redisUs: number;
  perSecond: number;
  /** `WAIT`s sent per write. */
  waits: number;
}

/** One round of `op`. */
async function round(op: string, index: number): Promise<Round> {
  const store = await RedisStore.connect({
    url: redis.url,
    prefix: `bench:${op}:${index}:`,
    maxUsers: 100_000_000,
    waitReplicas: replicaCount,
  });
  try {
    let n = 0;
    const write = (): Promise<unknown> =>
      op === "register"
        ? store.registerUser(`user${n++}`, "t".repeat(40))
        : op === "message"
        ? store.addMessage('{"text":"Hello, bench!","color":"red","user":"b"}')
        : store.setQuote("Hello there.");
    const batch = () => Promise.all(Array.from({ length: batchSize }, write));
    for (let i = 0; i < 20; i++) await batch();
    await redis.cli("CONFIG", "RESETSTAT");
    const cpu = cpuUsage();
    const start = performance.now();
    for (let i = 0; i < writes / batchSize; i++) await batch();
    const seconds = (performance.now() - start) / 1000;
    const used = cpuUsage(cpu);
    return {
      cpuUs: (used.user + used.system) / writes,
      redisUs: await stat(
        "commandstats",
        /cmdstat_evalsha:calls=\d+,usec=\d+,usec_per_call=([\d.]+)/,
      ),
      perSecond: writes / seconds,
      waits: (await stat("commandstats", /cmdstat_wait:calls=(\d+)/) || 0) /
        writes,
    };
  } finally {
    // The check removes the records of settled writes once their fences
    // have passed: a second for the fence, a second of grace, a check.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    await store.close();
  }
}

console.log(
  "| write | CPU here, µs/write | Redis, µs/script call | writes/s | WAITs/write | record keys left |",
);
console.log("| --- | --: | --: | --: | --: | --: |");
try {
  for (const op of ops) {
    const results: Round[] = [];
    for (let i = 0; i < rounds; i++) results.push(await round(op, i));
    const records = (await redis.cli("KEYS", "*:writes:*")).split("\n")
      .filter((key) => key !== "").length;
    await redis.cli("FLUSHALL");
    const m = (key: keyof Round) => median(results.map((r) => r[key]));
    console.log(
      `| ${op} | ${m("cpuUs").toFixed(2)} | ${m("redisUs").toFixed(2)} | ${
        m("perSecond").toFixed(0)
      } | ${m("waits").toFixed(3)} | ${records} |`,
    );
  }
} finally {
  for (const replica of replicas) await replica.kill();
  await redis.kill();
}
