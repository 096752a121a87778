/**
 * A throw-away Redis Sentinel deployment for the tests and the checker: one
 * master, replicas and sentinels, each a real `redis-server` process on a
 * free loopback port, with failover settings fast enough for a test (the
 * master is deemed down after 500 ms). Killing the master, waiting for a
 * replica's promotion and bringing the old master back as a replica are
 * what a test needs to exercise a failover.
 */

import { connectAdmin, type RedisAdmin } from "./redis_admin.ts";
import { freePort, waitForPort } from "./program.ts";
import { redisServerPath } from "./redis_server.ts";

/** The name the sentinels monitor the master under. */
export const MASTER_NAME = "lmsmaster";

/** How a deployment is built. */
export interface DeploymentOptions {
  /** Replicas of the master. Default 2. */
  replicas?: number;
  /** Sentinels, of which a majority must agree. Default 3. */
  sentinels?: number;
}

/** One failover, timed with `performance.now()`. */
export interface Failover {
  /** The master killed (or stopped), and when. */
  oldPort: number;
  killedAt: number;
  /** The replica promoted, and when a sentinel first named it the master. */
  newPort: number;
  promotedAt: number;
}

/** A running deployment. */
export interface SentinelDeployment {
  /** `redis+sentinel://` naming every sentinel and the master. */
  storeUrl: string;
  /** The ports of the sentinels. */
  sentinelPorts: number[];
  /** The port of the master as the sentinels name it now. */
  masterPort(): Promise<number>;
  /**
   * Kills the master at once (SIGKILL), or with `freeze` stops it
   * (SIGSTOP: it keeps its connections and its role), and waits until a
   * sentinel names another; throws after `timeoutMs`.
   */
  failover(
    options?: { freeze?: boolean; timeoutMs?: number },
  ): Promise<Failover>;
  /** Lets a master stopped by `failover({ freeze: true })` run again (SIGCONT). */
  thaw(port: number): void;
  /** Starts Redis again on `port`, as a replica of the current master, and waits until it has synced. */
  restartAsReplica(port: number): Promise<void>;
  /** Waits until the sentinels know `replicas` replicas of the master in sync and each other. */
  settled(replicas?: number, timeoutMs?: number): Promise<void>;
  /** Runs one command on the Redis node at `port` (a fresh connection). */
  command(port: number, ...args: string[]): Promise<unknown>;
  /** Stops every process and removes the sentinels' files. */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function spawn(bin: string, args: string[]): Deno.ChildProcess {
  return new Deno.Command(bin, { args, stdout: "null", stderr: "null" })
    .spawn();
}

/** A field of `INFO`-style text (`name:value` lines). */
function field(info: string, name: string): string | undefined {
  return info.match(new RegExp(`^${name}:(.*?)\\r?$`, "m"))?.[1];
}

/** Pairs of a flat `[name, value, ...]` reply, as an object. */
function pairs(reply: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  let name: string | undefined;
  for (const item of reply as string[]) {
    if (name === undefined) name = item;
    else {
      out[name] = item;
      name = undefined;
    }
  }
  return out;
}

/**
 * Starts a deployment and waits until it is ready to fail over: every
 * replica in sync, and every sentinel knowing the replicas and the other
 * sentinels.
 *
 * @example A deployment for one test
 * ```ts ignore
 * const deployment = await startSentinelDeployment();
 * const failover = await deployment.failover();
 * await deployment.restartAsReplica(failover.oldPort);
 * await deployment.stop();
 * ```
 */
export async function startSentinelDeployment(
  options: DeploymentOptions = {},
): Promise<SentinelDeployment> {
  const bin = redisServerPath();
  if (!bin) throw new Error("redis-server is not on PATH");
  const replicaCount = options.replicas ?? 2;
  const sentinelCount = options.sentinels ?? 3;
  const dir = await Deno.makeTempDir({ prefix: "lms-sentinel-" });
  const nodes = new Map<number, Deno.ChildProcess>();
  const sentinels: Deno.ChildProcess[] = [];
  const admins: RedisAdmin[] = [];
  const startNode = async (port: number, masterPort?: number) => {
    // Each node in a directory of its own, emptied: a replica may write
    // what it received from its master there, which a node started later
    // would load.
    const nodeDir = `${dir}/node-${port}`;
    await Deno.remove(nodeDir, { recursive: true }).catch(() => {});
    await Deno.mkdir(nodeDir);
    nodes.set(
      port,
      spawn(bin, [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--dir",
        nodeDir,
        "--save",
        "",
        "--appendonly",
        "no",
        "--repl-diskless-load",
        "on-empty-db",
        // A replica started empty syncs at once, not after Redis's 5 s
        // wait for more replicas to share the transfer.
        "--repl-diskless-sync-delay",
        "0",
        ...(masterPort === undefined
          ? []
          : ["--replicaof", "127.0.0.1", String(masterPort)]),
      ]),
    );
    await waitForPort(port, "redis-server");
  };
  const kill = async (child: Deno.ChildProcess) => {
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    await child.status;
  };
  const stop = async () => {
    for (const admin of admins.splice(0)) {
      try {
        admin.close();
      } catch {
        // Closed by the server.
      }
    }
    await Promise.all([...nodes.values(), ...sentinels].map(kill));
    nodes.clear();
    sentinels.length = 0;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  globalThis.addEventListener("unload", () => {
    for (const child of [...nodes.values(), ...sentinels]) {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }
  });

  const command = async (port: number, ...args: string[]) => {
    const admin = await connectAdmin(port);
    try {
      return await admin.command(...args);
    } finally {
      admin.close();
    }
  };

  try {
    const masterPort = freePort();
    await startNode(masterPort);
    for (let i = 0; i < replicaCount; i++) {
      await startNode(freePort(), masterPort);
    }
    const sentinelPorts: number[] = [];
    for (let i = 0; i < sentinelCount; i++) {
      const port = freePort();
      const file = `${dir}/sentinel-${port}.conf`;
      await Deno.writeTextFile(
        file,
        [
          `port ${port}`,
          "bind 127.0.0.1",
          `dir ${dir}`,
          `logfile ${dir}/sentinel-${port}.log`,
          `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${masterPort} ${
            Math.floor(sentinelCount / 2) + 1
          }`,
          `sentinel down-after-milliseconds ${MASTER_NAME} 1500`,
          `sentinel failover-timeout ${MASTER_NAME} 10000`,
          `sentinel parallel-syncs ${MASTER_NAME} ${replicaCount}`,
          "",
        ].join("\n"),
      );
      sentinels.push(spawn(bin, [file, "--sentinel"]));
      sentinelPorts.push(port);
    }
    for (const port of sentinelPorts) {
      await waitForPort(port, "redis-server --sentinel");
      admins.push(await connectAdmin(port));
    }

    /** What every sentinel answering names as the master now. */
    const named = async (): Promise<number[]> => {
      const ports: number[] = [];
      for (const admin of admins) {
        try {
          const reply = await admin.command(
            "SENTINEL",
            "GET-MASTER-ADDR-BY-NAME",
            MASTER_NAME,
          ) as string[] | null;
          if (reply) ports.push(Number(reply[1]));
        } catch {
          // A sentinel that does not answer names nothing.
        }
      }
      return ports;
    };
    const current = async () => {
      for (let tries = 0; tries < 100; tries++) {
        const ports = await named();
        const [first] = ports;
        if (first !== undefined && ports.every((p) => p === first)) {
          return first;
        }
        await sleep(50);
      }
      throw new Error("the sentinels do not agree on a master");
    };

    const settled = async (replicas = replicaCount, timeoutMs = 20_000) => {
      const deadline = performance.now() + timeoutMs;
      let last = "";
      while (performance.now() < deadline) {
        try {
          const master = await current();
          const info = String(await command(master, "INFO", "replication"));
          const online =
            (info.match(/^slave\d+:.*state=online/gm) ?? []).length;
          let known = true;
          for (const admin of admins) {
            const state = pairs(
              await admin.command("SENTINEL", "MASTER", MASTER_NAME),
            );
            const flags = state.flags;
            if (flags === undefined) {
              throw new Error("SENTINEL MASTER: no flags");
            }
            known &&= Number(state["num-slaves"]) >= replicas &&
              Number(state["num-other-sentinels"]) >= sentinelCount - 1 &&
              !flags.includes("down") &&
              !flags.includes("failover");
          }
          last = `master ${master}: ${online} replicas online; sentinels ${
            known ? "agree" : "still learning"
          }`;
          if (online >= replicas && known) return;
        } catch (error) {
          last = String(error);
        }
        await sleep(100);
      }
      throw new Error(`the deployment did not settle: ${last}`);
    };
    await settled();

    return {
      storeUrl: `redis+sentinel://${
        sentinelPorts.map((p) => `127.0.0.1:${p}`).join(",")
      }/${MASTER_NAME}`,
      sentinelPorts,
      masterPort: current,
      async failover({ freeze = false, timeoutMs = 20_000 } = {}) {
        const oldPort = await current();
        const child = nodes.get(oldPort);
        if (!child) throw new Error(`no process on ${oldPort}`);
        const killedAt = performance.now();
        if (freeze) child.kill("SIGSTOP");
        else {
          nodes.delete(oldPort);
          await kill(child);
        }
        const deadline = killedAt + timeoutMs;
        while (performance.now() < deadline) {
          const moved = (await named()).find((p) => p !== oldPort);
          if (moved !== undefined) {
            return {
              oldPort,
              killedAt,
              newPort: moved,
              promotedAt: performance.now(),
            };
          }
          await sleep(10);
        }
        throw new Error(`no replica was promoted in ${timeoutMs} ms`);
      },
      thaw(port) {
        nodes.get(port)?.kill("SIGCONT");
      },
      async restartAsReplica(port) {
        await startNode(port, await current());
        for (let tries = 0; tries < 200; tries++) {
          const info = String(await command(port, "INFO", "replication"));
          if (field(info, "master_link_status") === "up") return;
          await sleep(50);
        }
        throw new Error(`the replica on ${port} did not sync`);
      },
      settled,
      command,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
