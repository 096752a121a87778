/**
 * Cluster control: a throw-away `redis-server` on a free loopback port and
 * several instances of the real program on it, each on a fixed port so that
 * one killed and started again is found where clients left it.
 * @module
 */

import { startRedis } from "../../tests/_support/redis_server.ts";
import type { RedisServer } from "../../tests/_support/redis_server.ts";
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
}

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
  readonly redis: RedisServer;
  #admin: RedisAdmin;
  #programs: (RunningServer | undefined)[];
  #ports: number[];
  #options: ClusterOptions;
  #dir?: string;

  private constructor(
    redis: RedisServer,
    admin: RedisAdmin,
    options: ClusterOptions,
    dir?: string,
  ) {
    this.redis = redis;
    this.#admin = admin;
    this.#options = options;
    this.#dir = dir;
    this.#ports = Array.from({ length: options.programs }, () => freePort());
    this.urls = this.#ports.map((port) => `http://127.0.0.1:${port}/`);
    this.#programs = this.#ports.map(() => undefined);
  }

  /** Starts Redis, then every program; on failure leaves nothing running. */
  static async start(options: ClusterOptions): Promise<Cluster> {
    const dir = options.persistent
      ? await Deno.makeTempDir({ prefix: "lms-verify-" })
      : undefined;
    const redis = await startRedis({ appendOnlyDir: dir });
    const cluster = new Cluster(
      redis,
      await RedisAdmin.connect(redis.port),
      options,
      dir,
    );
    try {
      for (let i = 0; i < options.programs; i++) await cluster.startProgram(i);
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** The admin connection, opened again if Redis restarted. */
  async admin(): Promise<RedisAdmin> {
    try {
      await this.#admin.command("PING");
    } catch {
      this.#admin.close();
      this.#admin = await RedisAdmin.connect(this.redis.port);
    }
    return this.#admin;
  }

  /** Starts program `i` on its port (again, after a kill). */
  async startProgram(i: number): Promise<void> {
    this.#programs[i] = await startServer(
      [
        `--store=${this.redis.url}`,
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
    this.#admin.close();
    await this.redis.kill();
    if (this.#dir) await Deno.remove(this.#dir, { recursive: true });
    return problems;
  }
}
