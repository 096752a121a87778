/**
 * `deno task bench:staleness`: how long after one process answers
 * `{"status":"added"}` another process, which serves GET / from its local
 * copy, shows the message. Two programs share one throw-away `redis-server`;
 * a reader polls the second without pause while the first takes a post.
 * @module
 */

import { flagsOf, usageError } from "./cli.ts";
import { percentile } from "./median.ts";
import { startRedis } from "../tests/_support/redis_server.ts";
import { startServer } from "../tests/_support/program.ts";

const flags = flagsOf(
  { samples: { type: "string", default: "500" } },
  `Usage: deno task bench:staleness [--samples=N]
  --samples=N   posts to time (default 500); needs redis-server on PATH`,
);
if (!/^[1-9]\d{0,6}$/.test(flags.samples)) {
  usageError(
    `--samples must be a whole number of at least 1 (got "${flags.samples}")`,
  );
}
const samples = Number(flags.samples);

const redis = await startRedis();
const store = [`--store=${redis.url}`, "--quiet"];
const writer = await startServer(store);
const reader = await startServer(store);
try {
  const res = await fetch(`${writer.url}users`, {
    method: "POST",
    body: "stale",
  });
  const headers = { "x-messaging-token": (await res.json()).token };
  const delays: number[] = [];
  for (let i = 0; i < samples; i++) {
    const text = `m${i}`;
    // The reader holds a copy of the newest messages before each write.
    await (await fetch(reader.url)).body?.cancel();
    const posted = await fetch(writer.url, {
      method: "POST",
      headers,
      body: JSON.stringify({ text }),
    });
    await posted.body?.cancel();
    const added = performance.now();
    let seen = false;
    // Bounded: a message not seen within 2 s counts as 2 s.
    while (!seen && performance.now() - added < 2_000) {
      const newest = await (await fetch(reader.url)).json();
      seen = newest[0]?.text === text;
    }
    delays.push(performance.now() - added);
  }
  delays.sort((a, b) => a - b);
  const at = (q: number) => percentile(delays, q).toFixed(2);
  console.log(
    `staleness over ${samples} posts (ms from the writer's answer until the other process serves the message): ` +
      `median ${at(0.5)}, p99 ${at(0.99)}, max ${at(1)}`,
  );
} finally {
  await writer.stop();
  await reader.stop();
  await redis.kill();
}
