/**
 * The CPU one server process spends on N followers (bench/scale_readers.ts)
 * on one Redis: each second while nothing is posted (Deno's WebSocket pings
 * fall in it), then per delivered event over ten posts 2 s apart until
 * every follower has them all (that window's idle cost included, as in
 * `bench:scale`). Used to find what a follower costs while idle
 * (bench/results/profiles/scale.md).
 *
 * ```sh
 * deno run -A tools/idle_cpu.ts [program|floor] [websocket|sse] [FOLLOWERS]
 * ```
 * @module
 */

import {
  cpuSeconds,
  freshRedis,
  postAll,
  Poster,
  PROGRAM_ARGS,
  type ReaderCounts,
  Readers,
  sleep,
  startOne,
  type Target,
  waitCaughtUp,
} from "../bench/scale_parts.ts";
import { freePort } from "../tests/_support/program.ts";

const [target = "program", transport = "websocket", count = "5000"] = Deno.args;
const followers = Number(count);
const redis = await freshRedis();
const port = freePort();
const server = await startOne({
  target: target as Target,
  port,
  store: redis.url,
  args: PROGRAM_ARGS,
});
const pid = server.process.pid;
const poster = new Poster(port);
await poster.register();
const readers = new Readers({ port, count: followers, first: 0, transport });
try {
  const ready = await readers.next<ReaderCounts>(300_000);
  if (!ready.ready) throw new Error(`not all open: ${JSON.stringify(ready)}`);
  await sleep(3000);
  const ticks: number[] = [];
  const idleStart = cpuSeconds(pid);
  for (let second = 0, last = idleStart; second < 20; second++) {
    await sleep(1000);
    const now = cpuSeconds(pid);
    ticks.push(Math.round((now - last) * 100));
    last = now;
  }
  const postStart = cpuSeconds(pid);
  const posts = 10;
  await postAll(poster, posts, 2000);
  await waitCaughtUp([readers], followers, posts, 60_000);
  const end = cpuSeconds(pid);
  console.log(JSON.stringify({
    target,
    transport,
    followers,
    idleCpuTicksEachSecond: ticks.join(" "),
    idleUsPerFollowerSecond: (postStart - idleStart) * 1e6 / followers / 20,
    cpuUsPerEvent: (end - postStart) * 1e6 / (followers * posts),
  }));
} finally {
  await readers.quit();
  await server.stop("SIGKILL");
  await redis.kill();
}
