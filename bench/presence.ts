/**
 * How long after a process holding a user's stream dies (kill -9) or stops
 * (SIGTERM) another process's readers hear the user go offline. Two
 * programs share one throw-away `redis-server`; each round starts a fresh
 * process to kill. Then how long after registering, with
 * `--forget-users-after=2`, an idle user is forgotten: on the memory store,
 * and over Redis registered through one process and heard through another.
 *
 * ```sh
 * deno run --allow-net --allow-run --allow-read --allow-env bench/presence.ts --heartbeats=200,1000 --rounds=5
 * ```
 * @module
 */

import { flagsOf, usageError } from "./cli.ts";
import { median } from "./median.ts";
import { startRedis } from "../tests/_support/redis_server.ts";
import { type RunningServer, startServer } from "../tests/_support/program.ts";
import { headerValue } from "../src/client/header_value.js";
import {
  type EventReader,
  readEvents,
} from "../tests/_support/event_reader.ts";

const flags = flagsOf(
  {
    heartbeats: { type: "string", default: "200,1000" },
    rounds: { type: "string", default: "5" },
  },
  `Usage: deno run ... bench/presence.ts [--heartbeats=MS,MS] [--rounds=N]
  --heartbeats=MS,...  --heartbeat-ms values to measure (default 200,1000)
  --rounds=N           kills and stops per value (default 5, at most 100)
Needs redis-server on PATH.`,
);
const heartbeats = flags.heartbeats.split(",").map(Number);
if (!heartbeats.every((ms) => Number.isInteger(ms) && ms >= 10)) {
  usageError(`--heartbeats must be whole numbers of at least 10`);
}
if (!/^([1-9]\d?|100)$/.test(flags.rounds)) {
  usageError(`--rounds must be a whole number from 1 to 100`);
}
const rounds = Number(flags.rounds);

/** The next presence event of `name`, waiting at most 30 s. */
async function presenceOf(events: EventReader, name: string) {
  const deadline = Date.now() + 30_000;
  for (let i = 0; i < 10_000; i++) {
    const event = await events.event(Math.max(1, deadline - Date.now()));
    const data = JSON.parse(event.data);
    if (event.event === "presence" && data.name === name) return data;
  }
  throw new Error("no presence event");
}

/** Milliseconds from `end(holder)` until `watcher` hears `name` offline. */
async function timeOffline(
  start: () => Promise<RunningServer>,
  watcher: EventReader,
  name: string,
  end: (holder: RunningServer) => void,
): Promise<number> {
  const holder = await start();
  const res = await fetch(`${holder.url}users`, { method: "POST", body: name });
  const { token } = await res.json();
  const stream = await fetch(`${holder.url}events`, {
    headers: { "x-messaging-token": headerValue(token) },
  });
  const reading = readEvents(stream.body!);
  if ((await presenceOf(watcher, name)).online !== true) throw new Error(name);
  const ended = performance.now();
  end(holder);
  if ((await presenceOf(watcher, name)).online !== false) throw new Error(name);
  const took = performance.now() - ended;
  await reading.close();
  await holder.stop("SIGKILL");
  return took;
}

/** Seconds from registering `name` through `via` until `watcher` hears it forgotten. */
async function timeForgotten(
  via: RunningServer,
  watcher: EventReader,
  name: string,
): Promise<number> {
  const registered = performance.now();
  const res = await fetch(`${via.url}users`, { method: "POST", body: name });
  await res.body?.cancel();
  if ((await presenceOf(watcher, name)).registered !== false) {
    throw new Error(name);
  }
  return (performance.now() - registered) / 1000;
}

const FORGET_AFTER = 2;

const redis = await startRedis();
const rows: string[] = [];
const forgetRows: string[] = [];
try {
  for (const heartbeatMs of heartbeats) {
    const args = [
      `--store=${redis.url}`,
      `--redis-prefix=bench${heartbeatMs}:`,
      "--quiet",
      `--heartbeat-ms=${heartbeatMs}`,
    ];
    const watching = await startServer(args);
    const watcher = readEvents((await fetch(`${watching.url}events`)).body!);
    try {
      const killed: number[] = [];
      const stopped: number[] = [];
      for (let round = 0; round < rounds; round++) {
        killed.push(
          await timeOffline(
            () => startServer(args),
            watcher,
            `k${round}`,
            (holder) => holder.process.kill("SIGKILL"),
          ),
        );
        stopped.push(
          await timeOffline(
            () => startServer(args),
            watcher,
            `s${round}`,
            (holder) => void holder.stop("SIGTERM"),
          ),
        );
      }
      const cell = (ms: number[]) =>
        `${median(ms).toFixed(0)} (${Math.min(...ms).toFixed(0)}–${
          Math.max(...ms).toFixed(0)
        })`;
      rows.push(
        `| ${heartbeatMs} | ${3 * heartbeatMs} | ${cell(killed)} | ${
          (Math.max(...killed) / heartbeatMs).toFixed(2)
        } | ${cell(stopped)} |`,
      );
    } finally {
      await watcher.close();
      await watching.stop();
    }
  }
  for (const store of ["memory", "redis"]) {
    const args = ["--quiet", `--forget-users-after=${FORGET_AFTER}`];
    if (store === "redis") {
      args.push(`--store=${redis.url}`, "--redis-prefix=benchforget:");
    }
    const watching = await startServer(args);
    const via = store === "redis" ? await startServer(args) : watching;
    const watcher = readEvents((await fetch(`${watching.url}events`)).body!);
    try {
      const took: number[] = [];
      for (let round = 0; round < rounds; round++) {
        took.push(await timeForgotten(via, watcher, `f${round}`));
      }
      forgetRows.push(
        `| ${store} | ${median(took).toFixed(2)} (${
          Math.min(...took).toFixed(2)
        }–${Math.max(...took).toFixed(2)}) |`,
      );
    } finally {
      await watcher.close();
      await watching.stop();
      if (via !== watching) await via.stop();
    }
  }
} finally {
  await redis.kill();
}
console.log(`offline after the holder ends, ms: median (min–max) of ${rounds}
| --heartbeat-ms | contract bound | kill -9 | worst / heartbeat | SIGTERM |
| --- | --- | --- | --- | --- |
${rows.join("\n")}

forgotten after registering, idle, with --forget-users-after=${FORGET_AFTER}, s: median (min–max) of ${rounds}
| store | forgotten after |
| --- | --- |
${forgetRows.join("\n")}`);
