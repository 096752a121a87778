/** Runs a real `redis-server` for the tests, on a free loopback port, when one is on PATH. */

import { freePort, waitForPort } from "./program.ts";

/** The path of `redis-server`, or `undefined` when it is not installed. */
export function redisServerPath(): string | undefined {
  const out = new Deno.Command("sh", {
    args: ["-c", "command -v redis-server"],
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  const path = new TextDecoder().decode(out.stdout).trim();
  return out.success && path ? path : undefined;
}

/** A Redis server the tests control. */
export interface RedisServer {
  url: string;
  port: number;
  /** Kills the server at once, as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
  /** Freezes it (SIGSTOP): connections stay open and nothing is answered. */
  pause(): void;
  /** Thaws it (SIGCONT). */
  resume(): void;
  /** Runs one command through `redis-cli` and returns what it printed. */
  cli(...args: string[]): Promise<string>;
}

/** Options of {@linkcode startRedis}. */
export interface RedisOptions {
  /**
   * Keep an append-only file in this directory, fsynced before every reply
   * (`appendfsync always`), so a write Redis acknowledged survives a kill.
   * Default: no persistence at all.
   */
  appendOnlyDir?: string;
  /** Keep `dump.rdb` in this directory: `SAVE` writes it, a restart loads it (what a snapshot-only Redis does). */
  snapshotDir?: string;
  /** Replicate the server on this loopback port; start-up waits until the replica has synced. */
  replicaOf?: number;
}

/** Starts a throw-away server, with persistence off unless `options` ask for it. */
export async function startRedis(
  options: RedisOptions = {},
): Promise<RedisServer> {
  const bin = redisServerPath();
  if (!bin) throw new Error("redis-server is not on PATH");
  const port = freePort();
  const persistence = options.appendOnlyDir === undefined
    ? [
      ...(options.snapshotDir === undefined
        ? []
        : ["--dir", options.snapshotDir]),
      "--appendonly",
      "no",
    ]
    : [
      "--dir",
      options.appendOnlyDir,
      "--appendonly",
      "yes",
      "--appendfsync",
      "always",
    ];
  let child: Deno.ChildProcess;
  const cli = async (...args: string[]) => {
    const out = await new Deno.Command("redis-cli", {
      args: ["-p", String(port), ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    return new TextDecoder().decode(out.stdout).trim();
  };
  const spawn = async () => {
    child = new Deno.Command(bin, {
      args: [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        // A replica started later syncs at once, not after Redis's 5 s wait
        // for more replicas to share the transfer.
        "--repl-diskless-sync-delay",
        "0",
        ...persistence,
        ...(options.replicaOf === undefined ? [] : [
          "--replicaof",
          "127.0.0.1",
          String(options.replicaOf),
          // Load what the master sends straight into memory: by default a
          // replica writes it to dump.rdb in its directory (here, the
          // tests' own), which every server started there later would load.
          "--repl-diskless-load",
          "on-empty-db",
        ]),
      ],
      stdout: "null",
      stderr: "null",
    }).spawn();
    await waitForPort(port, "redis-server");
  };
  await spawn();
  for (let tries = 0; options.replicaOf !== undefined; tries++) {
    const info = await cli("INFO", "replication");
    if (/^master_link_status:up\r?$/m.test(info)) break;
    if (tries === 100) throw new Error(`the replica on ${port} did not sync`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const kill = async () => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await child.status;
  };
  globalThis.addEventListener("unload", () => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  });
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    kill,
    restart: spawn,
    pause: () => child.kill("SIGSTOP"),
    resume: () => child.kill("SIGCONT"),
    cli,
  };
}
