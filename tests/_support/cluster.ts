/** Several programs on one Redis server, and waiting for what they do to show. */

import assert from "node:assert/strict";
import { type RedisServer, startRedis } from "./redis_server.ts";
import { type RunningServer, startServer } from "./program.ts";

/** Polls `probe` every 20 ms, at most `tries` times, until it returns true. */
export async function eventually(
  probe: () => Promise<boolean>,
  tries = 250,
): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`still not true after ${tries} tries`);
}

/** `count` programs, one name each. */
type Programs<N extends 1 | 2> = N extends 1 ? [RunningServer]
  : [RunningServer, RunningServer];

/**
 * Runs `fn` with one Redis server and `count` programs using it under one
 * prefix, given to `fn` as a tuple of `count`; `start` starts one more,
 * stopped with the others, and `kill` kills one with SIGKILL, as a crash
 * would (it is not expected to stop cleanly at the end).
 */
export async function withCluster<N extends 1 | 2>(
  count: N,
  args: string[],
  fn: (
    servers: Programs<N>,
    redis: RedisServer,
    start: () => Promise<RunningServer>,
    kill: (server: RunningServer) => void,
  ) => Promise<void>,
): Promise<void> {
  const redis = await startRedis();
  const prefix = `--redis-prefix=t${crypto.randomUUID().slice(0, 8)}:`;
  const servers: RunningServer[] = [];
  const killed: RunningServer[] = [];
  const kill = (server: RunningServer) => {
    servers.splice(servers.indexOf(server), 1);
    killed.push(server);
    server.process.kill("SIGKILL");
  };
  const start = async () => {
    const server = await startServer([
      `--store=${redis.url}`,
      prefix,
      "--quiet",
      ...args,
    ]);
    servers.push(server);
    return server;
  };
  try {
    for (let i = 0; i < count; i++) await start();
    // The loop above started `count` of them.
    await fn([...servers] as Programs<N>, redis, start, kill);
    for (const server of servers.splice(0)) {
      // stop() kills a program still running 10 s after SIGTERM (137).
      const code = await server.stop();
      assert.equal(
        code,
        0,
        `${server.url} exited ${code} on SIGTERM${
          code === 137 ? " (did not stop within 10 s: killed)" : ""
        }; its standard error:\n${server.stderr()}`,
      );
    }
  } finally {
    await Promise.all(
      [...servers, ...killed].map((s) => s.stop("SIGKILL")),
    );
    await redis.kill();
  }
}
