/**
 * `deno task bench:catch-up`: what a reconnecting reader costs on Redis, by
 * `--history`. For each history size, one program on a fresh Redis whose
 * history is full: the time until a reader that is already up to date
 * (`Last-Event-ID` = the newest id) has its answer, one at a time; the
 * same for a reader 10 messages behind; then a storm of simultaneous
 * up-to-date reconnects (what follows any Redis blip), with the statuses
 * they got.
 * @module
 */

import { flagsOf, usageError } from "./cli.ts";
import { median } from "./median.ts";
import { startRedis } from "../tests/_support/redis_server.ts";
import { startServer } from "../tests/_support/program.ts";
import { RedisStore } from "../src/store/redis/redis_store.ts";

const USAGE =
  `Usage: deno task bench:catch-up [--history=100,10000,50000] [--rounds=50] [--storm=100]`;

const flags = flagsOf({
  history: { type: "string", default: "100,10000,50000" },
  rounds: { type: "string", default: "50" },
  storm: { type: "string", default: "100" },
}, USAGE);
const histories = flags.history.split(",").map(Number);
const rounds = Number(flags.rounds);
const storm = Number(flags.storm);
if (
  histories.some((n) => !(Number.isInteger(n) && n >= 5 && n <= 1_000_000)) ||
  !(Number.isInteger(rounds) && rounds >= 1 && rounds <= 10_000) ||
  !(Number.isInteger(storm) && storm >= 1 && storm <= 5_000)
) {
  usageError("bad --history, --rounds or --storm");
}

const PREFIX = "bench:";

/** One reconnect resuming after `lastId`: its status and the milliseconds until its answer. */
async function reconnect(
  url: string,
  lastId: number,
): Promise<{ status: number; ms: number }> {
  const start = performance.now();
  const res = await fetch(`${url}events`, {
    headers: { "last-event-id": String(lastId) },
    signal: AbortSignal.timeout(30_000),
  });
  const ms = performance.now() - start;
  await res.body?.cancel();
  return { status: res.status, ms };
}

/** Fills the history with `count` messages of about 100 bytes, 500 at a time. */
async function fill(url: string, count: number): Promise<number> {
  const store = await RedisStore.connect({
    url,
    prefix: PREFIX,
    history: count,
  });
  try {
    let newest = 0;
    for (let sent = 0; sent < count; sent += 500) {
      const ids = await Promise.all(
        Array.from(
          { length: Math.min(500, count - sent) },
          (_, i) =>
            store.addMessage(JSON.stringify({
              text: `message ${sent + i} ${"x".repeat(60)}`,
              color: "black",
              user: "bench",
            })),
        ),
      );
      newest = Math.max(newest, ...ids);
    }
    return newest;
  } finally {
    await store.close();
  }
}

const format = (ms: number) => `${ms.toFixed(2)} ms`;

console.log(
  `| --history | up to date, median | up to date, max | 10 behind, median | ${storm} at once: 200 | 503 | other | all answered in |`,
);
console.log("| --: | --: | --: | --: | --: | --: | --: | --: |");
for (const history of histories) {
  const redis = await startRedis();
  const server = await startServer([
    `--store=${redis.url}`,
    `--redis-prefix=${PREFIX}`,
    `--history=${history}`,
    `--max-streams=${storm + 100}`,
    `--max-streams-per-client=${storm + 100}`,
    `--max-websockets-per-client=${storm + 100}`,
    "--quiet",
  ]);
  try {
    const newest = await fill(redis.url, history);
    const upToDate: number[] = [];
    const behind: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const now = await reconnect(server.url, newest);
      const late = await reconnect(server.url, newest - 10);
      if (now.status !== 200 || late.status !== 200) {
        throw new Error(
          `a reconnect was answered ${now.status}/${late.status}`,
        );
      }
      upToDate.push(now.ms);
      behind.push(late.ms);
    }
    const start = performance.now();
    const answers = await Promise.all(
      Array.from({ length: storm }, () => reconnect(server.url, newest)),
    );
    const stormMs = performance.now() - start;
    const count = (status: number) =>
      answers.filter((a) => a.status === status).length;
    console.log(
      `| ${history.toLocaleString("en")} | ${format(median(upToDate))} | ${
        format(Math.max(...upToDate))
      } | ${format(median(behind))} | ${count(200)} | ${count(503)} | ${
        storm - count(200) - count(503)
      } | ${format(stormMs)} |`,
    );
  } finally {
    await server.stop();
    await redis.kill();
  }
}
