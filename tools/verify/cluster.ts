/**
 * Cluster control: a throw-away `redis-server` on a free loopback port (or
 * a Sentinel deployment: a master, two replicas and three sentinels) and
 * several instances of the real program on it, each on a fixed port so that
 * one killed and started again is found where clients left it.
 * @module
 */

import { startRedis } from "../../tests/_support/redis_server.ts";
import type { RedisServer } from "../../tests/_support/redis_server.ts";
import {
  type Failover,
  type SentinelDeployment,
  startSentinelDeployment,
} from "../../tests/_support/sentinel_deployment.ts";
import {
  freePort,
  type RunningServer,
  startServer,
} from "../../tests/_support/program.ts";
import { RedisAdmin } from "./redis_admin.ts";

/** How the cluster is built. */
export interface ClusterOptions {
  programs: number;
  /** `--history`: above every message the run writes, so the end state can be read whole. */
  history: number;
  /** Redis keeps an append-only file fsynced on every write, so a restart keeps what it acknowledged. */
  persistent: boolean;
  /** Another checkout whose `main.ts` to run; default this one. */
  root?: string;
  /** Run on a Sentinel deployment instead of one server, the programs with `--redis-wait-replicas` set to this. */
  sentinel?: { waitReplicas: number };
}

/** One Redis server, and the admin connection to it. */
interface Standalone {
  redis: RedisServer;
  admin: RedisAdmin;
}

/** Where the programs keep their state. */
type Backend = Standalone | { deployment: SentinelDeployment };

/**
 * Redis and the programs, and the controls faults use.
 *
 * @example A cluster of two
 * ```ts ignore
 * const cluster = await Cluster.start({ programs: 2, history: 100_000, persistent: false });
 * await cluster.killProgram(1);
 * await cluster.startProgram(1);
 * await cluster.stop();
 * ```
 */
export class Cluster {
  /** Each program's base URL, ending in `/`: the same through restarts. */
  readonly urls: string[];
  /** The failovers made so far, in order (on a Sentinel deployment). */
  readonly failovers: Failover[] = [];
  #backend: Backend;
  #programs: (RunningServer | undefined)[];
  #ports: number[];
  #options: ClusterOptions;
  #dir?: string;

  private constructor(
    backend: Backend,
    options: ClusterOptions,
    dir?: string,
  ) {
    this.#backend = backend;
    this.#options = options;
    this.#dir = dir;
    this.#ports = Array.from({ length: options.programs }, () => freePort());
    this.urls = this.#ports.map((port) => `http://127.0.0.1:${port}/`);
    this.#programs = this.#ports.map(() => undefined);
  }

  /** Starts Redis, then every program; on failure leaves nothing running. */
  static async start(options: ClusterOptions): Promise<Cluster> {
    if (options.sentinel) {
      const cluster = new Cluster(
        { deployment: await startSentinelDeployment() },
        options,
      );
      return await cluster.#startPrograms();
    }
    const dir = options.persistent
      ? await Deno.makeTempDir({ prefix: "lms-verify-" })
      : undefined;
    const redis = await startRedis({ appendOnlyDir: dir });
    const cluster = new Cluster(
      { redis, admin: await RedisAdmin.connect(redis.port) },
      options,
      dir,
    );
    return await cluster.#startPrograms();
  }

  async #startPrograms(): Promise<Cluster> {
    try {
      for (let i = 0; i < this.#options.programs; i++) {
        await this.startProgram(i);
      }
    } catch (error) {
      await this.stop();
      throw error;
    }
    return this;
  }

  /** The one Redis server (not on a Sentinel deployment). */
  get redis(): RedisServer {
    return this.#standalone().redis;
  }

  /** The Sentinel deployment (only when started with `sentinel`). */
  get deployment(): SentinelDeployment {
    if (!("deployment" in this.#backend)) {
      throw new Error("this cluster runs on one Redis server, not Sentinel");
    }
    return this.#backend.deployment;
  }

  #standalone(): Standalone {
    if (!("redis" in this.#backend)) {
      throw new Error("this cluster runs on Sentinel, not one Redis server");
    }
    return this.#backend;
  }

  /** The admin connection, opened again if Redis restarted. */
  async admin(): Promise<RedisAdmin> {
    const backend = this.#standalone();
    try {
      await backend.admin.command("PING");
    } catch {
      backend.admin.close();
      backend.admin = await RedisAdmin.connect(backend.redis.port);
    }
    return backend.admin;
  }

  /** Starts program `i` on its port (again, after a kill). */
  async startProgram(i: number): Promise<void> {
    const sentinel = this.#options.sentinel;
    this.#programs[i] = await startServer(
      [
        ...(sentinel === undefined ? [`--store=${this.redis.url}`] : [
          `--store=${this.deployment.storeUrl}`,
          `--redis-wait-replicas=${sentinel.waitReplicas}`,
        ]),
        `--port=${this.#ports[i]}`,
        `--history=${this.#options.history}`,
        "--quiet",
      ],
      {},
      { root: this.#options.root },
    );
  }

  /** Kills program `i` at once (SIGKILL), as a crash would. */
  async killProgram(i: number): Promise<void> {
    const program = this.#programs[i];
    this.#programs[i] = undefined;
    await program?.stop("SIGKILL");
  }

  /** Kills Redis (SIGKILL) and starts it again on the same port. */
  async restartRedis(downMs: number): Promise<void> {
    await this.redis.kill();
    await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.redis.restart();
  }

  /** What each program wrote on standard error, for a report on failure. */
  stderr(): string[] {
    return this.#programs.map((p) => p?.stderr() ?? "");
  }

  /** Stops the programs (SIGTERM, checking each exits 0) and Redis. */
  async stop(): Promise<string[]> {
    const problems: string[] = [];
    for (const [i, program] of this.#programs.entries()) {
      if (program === undefined) continue;
      const code = await program.stop();
      if (code !== 0) {
        problems.push(`program ${i} exited ${code}: ${program.stderr()}`);
      }
    }
    this.#programs.fill(undefined);
    if ("deployment" in this.#backend) await this.#backend.deployment.stop();
    else {
      this.#backend.admin.close();
      await this.#backend.redis.kill();
    }
    if (this.#dir) await Deno.remove(this.#dir, { recursive: true });
    return problems;
  }
}
