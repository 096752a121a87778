/**
 * Fault scenarios. Each is a round, repeated while the writers run: inject
 * the fault, hold it, undo it, and let the service settle. Every round ends
 * with the cluster whole again (Redis running and answering, every program
 * up, `maxclients` restored), whatever failed in it.
 * @module
 */

import type { Cluster } from "./cluster.ts";
import type { Expectations } from "./reconcile.ts";

/** One fault scenario. */
export interface Scenario extends Expectations {
  name: string;
  /** One line for `--help` and the report. */
  description: string;
  /** Redis keeps an append-only file (`appendfsync always`). */
  persistent: boolean;
  /** Run on a Sentinel deployment, the programs with `--redis-wait-replicas` set to this. */
  sentinel?: { waitReplicas: number };
  /** Rounds to run at the least, however short the duration. */
  minRounds?: number;
  /** One round of the fault; `round` counts from 0. */
  round(cluster: Cluster, round: number): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Kills Redis clients of `type` (the admin connection is spared: SKIPME defaults to yes). */
async function killClients(cluster: Cluster, type: "pubsub" | "normal") {
  await (await cluster.admin()).command("CLIENT", "KILL", "TYPE", type);
}

/** Kills Redis, leaves it down for 0.5 s, starts it again on its port. */
async function restartRedis(cluster: Cluster) {
  await sleep(700);
  await cluster.restartRedis(500);
  await sleep(1500);
}

/**
 * Kills the master (SIGKILL) under the writers, waits until a sentinel
 * names the promoted replica, brings the old master back as a replica of
 * the new one, and waits until the deployment could fail over again.
 */
async function failover(cluster: Cluster) {
  await sleep(700);
  const deployment = cluster.deployment;
  const done = await deployment.failover();
  cluster.failovers.push(done);
  await deployment.restartAsReplica(done.oldPort);
  await deployment.settled();
  await sleep(300);
}

/** The failovers a full run makes at the least. */
const FAILOVERS = 10;

/**
 * Every scenario, by name.
 *
 * @example Running one round of a scenario
 * ```ts ignore
 * await SCENARIOS["kill-pubsub"].round(cluster, 0);
 * ```
 */
export const SCENARIOS: Record<string, Scenario> = Object.fromEntries(
  ([
    {
      name: "none",
      description: "no fault: the baseline, where nothing may be refused",
      durable: true,
      faultFree: true,
      persistent: false,
      round: () => sleep(1000),
    },
    {
      name: "kill-program",
      description: "kill -9 one program (each in turn), start it again",
      durable: true,
      faultFree: false,
      persistent: false,
      async round(cluster, round) {
        await sleep(700);
        const i = round % cluster.urls.length;
        await cluster.killProgram(i);
        await sleep(300);
        await cluster.startProgram(i);
      },
    },
    {
      name: "stop-redis",
      description: "SIGSTOP Redis for 2.5 s, then SIGCONT",
      durable: true,
      faultFree: false,
      persistent: false,
      async round(cluster) {
        await sleep(700);
        cluster.redis.pause();
        try {
          await sleep(2500);
        } finally {
          cluster.redis.resume();
        }
        await sleep(1000);
      },
    },
    {
      name: "restart-redis",
      description:
        "kill -9 Redis and start it again, with appendfsync always: nothing acknowledged may be lost",
      durable: true,
      faultFree: false,
      persistent: true,
      round: restartRedis,
    },
    {
      name: "restart-redis-empty",
      description:
        "kill -9 Redis without persistence and start it again empty: nothing refused may land, readers must be told",
      durable: false,
      faultFree: false,
      persistent: false,
      round: restartRedis,
    },
    {
      name: "kill-pubsub",
      description: "CLIENT KILL TYPE pubsub, every 0.7 s",
      durable: true,
      faultFree: false,
      persistent: false,
      async round(cluster) {
        await sleep(700);
        await killClients(cluster, "pubsub");
      },
    },
    {
      name: "kill-normal",
      description: "CLIENT KILL TYPE normal (command connections), every 0.1 s",
      durable: true,
      faultFree: false,
      persistent: false,
      async round(cluster) {
        await sleep(100);
        await killClients(cluster, "normal");
      },
    },
    {
      name: "maxclients",
      description:
        "maxclients lowered to the clients connected, then the pubsub (and every other round the command) connections killed; 2.5 s later restored",
      durable: true,
      faultFree: false,
      persistent: false,
      async round(cluster, round) {
        await sleep(700);
        const admin = await cluster.admin();
        const [, limit] = await admin.command(
          "CONFIG",
          "GET",
          "maxclients",
        ) as string[];
        if (limit === undefined) {
          throw new Error("CONFIG GET maxclients: no value");
        }
        const connected = await admin.info("clients", "connected_clients");
        // Lowered first, to what is connected less those about to be killed,
        // so the killed cannot take a free place back.
        const killed = round % 2 === 0 ? ["pubsub"] : ["pubsub", "normal"];
        const programs = cluster.urls.length;
        await admin.command(
          "CONFIG",
          "SET",
          "maxclients",
          String(Math.max(1, connected - programs * killed.length)),
        );
        try {
          for (const type of killed) {
            await killClients(cluster, type as "pubsub" | "normal");
          }
          await sleep(2500);
        } finally {
          await admin.command("CONFIG", "SET", "maxclients", limit);
        }
        await sleep(1000);
      },
    },
    {
      name: "failover",
      description:
        "Sentinel: kill -9 the master, a replica is promoted, the old master comes back as a replica; nothing refused may land (acknowledged writes the master had not replicated may be lost)",
      durable: false,
      mayLose: true,
      faultFree: false,
      persistent: false,
      sentinel: { waitReplicas: 0 },
      minRounds: FAILOVERS,
      round: failover,
    },
    {
      name: "failover-wait",
      description:
        "the same with --redis-wait-replicas=1: nothing acknowledged may be lost either",
      durable: true,
      faultFree: false,
      persistent: false,
      sentinel: { waitReplicas: 1 },
      minRounds: FAILOVERS,
      round: failover,
    },
  ] satisfies Scenario[]).map((s) => [s.name, s]),
);
