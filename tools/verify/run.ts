/**
 * One run of one scenario: a fresh cluster, readers on every process,
 * writers on every process, the fault repeated while they work, then the
 * end state read and reconciled with what everyone was told.
 * @module
 */

import { Cluster } from "./cluster.ts";
import type { Scenario } from "./faults.ts";
import { postSentinel, readFinalState, waitReady } from "./final_state.ts";
import { type Follower, followMessages, followQuotes } from "./readers.ts";
import {
  type ReaderLog,
  reconcile,
  type Reconciliation,
  type WriteRecord,
} from "./reconcile.ts";
import { runWriters } from "./writers.ts";

/** The size of a run. */
export interface RunOptions {
  writers: number;
  /** Message readers on each process. */
  readers: number;
  /** How long faults are injected, in ms (whole rounds: the last may run over). */
  durationMs: number;
  /** Writes each writer makes at most. */
  opsPerWriter: number;
  /** Pause between one writer's writes, in ms. */
  pauseMs: number;
  /** Another checkout whose `main.ts` to run. */
  root?: string;
}

/** One failover's times, in ms after the master was killed. */
export interface FailoverTimes {
  /** When a sentinel first named the promoted replica. */
  promotedMs: number;
  /** When the first write sent after the kill was acknowledged; absent if none was. */
  firstAckMs?: number;
}

/** What a run found. */
export interface ScenarioResult {
  scenario: Scenario;
  rounds: number;
  seconds: number;
  /** The failovers made, on a Sentinel deployment. */
  failovers: FailoverTimes[];
  /** Absent when the run could not finish (`errors` say why). */
  reconciliation?: Reconciliation;
  /** Why the run could not finish, or how a program misbehaved on stopping. */
  errors: string[];
}

const PROGRAMS = 2;
/** How soon after a promotion the contract wants the service back. */
const SERVED_AFTER_PROMOTION_MS = 5000;
/** At most this many rounds of a fault, whatever the duration. */
const MAX_ROUNDS = 500;

/**
 * Runs `scenario` once.
 *
 * @example The baseline, small
 * ```ts ignore
 * const result = await runScenario(SCENARIOS.none, {
 *   writers: 4, readers: 2, durationMs: 3000, opsPerWriter: 200, pauseMs: 20,
 * });
 * console.log(result.reconciliation?.violations);
 * ```
 */
export async function runScenario(
  scenario: Scenario,
  options: RunOptions,
): Promise<ScenarioResult> {
  const started = performance.now();
  const tag = crypto.randomUUID().slice(0, 6);
  const result: ScenarioResult = {
    scenario,
    rounds: 0,
    seconds: 0,
    failovers: [],
    errors: [],
  };
  let cluster: Cluster;
  try {
    cluster = await Cluster.start({
      programs: PROGRAMS,
      // Every write could be a message; the sentinels and slack on top.
      history: options.writers * options.opsPerWriter + 1000,
      persistent: scenario.persistent,
      root: options.root,
      sentinel: scenario.sentinel,
    });
  } catch (error) {
    result.errors.push(`the cluster did not start: ${messageOf(error)}`);
    return result;
  }
  const writes: WriteRecord[] = [];
  const readers: ReaderLog[] = [];
  const quotesSeen: string[] = [];
  const followers: Follower[] = [];
  const watchers: Follower[] = [];
  const stopWriters = new AbortController();
  let writing: Promise<void> | undefined;
  // Every wait below is bounded; should one still hang, say where.
  let phase = "starting readers";
  const watchdog = setTimeout(() => {
    console.error(`verify: ${scenario.name} still busy ${phase}`);
  }, options.durationMs + 120_000);
  Deno.unrefTimer(watchdog);
  try {
    cluster.urls.forEach((url, p) => {
      for (let r = 0; r < options.readers; r++) {
        const log: ReaderLog = { name: `p${p}r${r}`, connections: [] };
        readers.push(log);
        followers.push(followMessages(url, log));
      }
      watchers.push(followQuotes(url, quotesSeen));
    });
    for (let i = 0; i < 250 && !followers.every((f) => f.started); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    phase = "injecting faults";
    writing = runWriters({
      urls: cluster.urls,
      writers: options.writers,
      opsPerWriter: options.opsPerWriter,
      pauseMs: options.pauseMs,
      tag,
      log: writes,
    }, stopWriters.signal);
    const faultsFrom = performance.now();
    while (
      (performance.now() - faultsFrom < options.durationMs ||
        result.rounds < (scenario.minRounds ?? 0)) &&
      result.rounds < MAX_ROUNDS
    ) {
      await scenario.round(cluster, result.rounds++);
    }
    phase = "stopping writers";
    stopWriters.abort();
    await writing;
    phase = "waiting for ready";
    await waitReady(cluster.urls, 20_000);
    phase = "posting the sentinel";
    const [firstUrl] = cluster.urls;
    if (firstUrl === undefined) throw new Error("the cluster runs no program");
    const sentinel = await postSentinel(firstUrl, tag, writes);
    phase = "waiting for readers";
    await Promise.all(followers.map((f) => f.waitFor(sentinel.text, 15_000)));
    phase = "stopping readers";
    await Promise.all([...followers, ...watchers].map((f) => f.stop()));
    phase = "reading the final state";
    const final = await readFinalState(
      cluster.urls,
      sentinel,
      scenario.durable,
    );
    result.reconciliation = reconcile(
      { writes, readers, quotesSeen, final },
      scenario,
    );
  } catch (error) {
    result.errors.push(messageOf(error));
  } finally {
    phase = "stopping the cluster";
    stopWriters.abort();
    await writing?.catch(() => {});
    await Promise.all([...followers, ...watchers].map((f) => f.stop()));
    result.failovers = cluster.failovers.map((f) => {
      const acknowledged = writes.filter((w) =>
        w.status === 200 && w.start >= f.killedAt
      ).map((w) => w.end);
      return {
        promotedMs: f.promotedAt - f.killedAt,
        firstAckMs: acknowledged.length === 0
          ? undefined
          : Math.min(...acknowledged) - f.killedAt,
      };
    });
    result.failovers.forEach((f, i) => {
      const back = f.firstAckMs === undefined
        ? undefined
        : f.firstAckMs - f.promotedMs;
      if (back === undefined || back > SERVED_AFTER_PROMOTION_MS) {
        result.errors.push(
          `failover ${i + 1}: no write acknowledged within ${
            SERVED_AFTER_PROMOTION_MS / 1000
          } s of the promotion${
            back === undefined
              ? ""
              : ` (the first ${Math.round(back)} ms after)`
          }`,
        );
      }
    });
    result.errors.push(...await cluster.stop());
    clearTimeout(watchdog);
  }
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

const messageOf = (error: unknown) =>
  error instanceof Error ? error.message : String(error);

/** Whether a run found nothing wrong. */
export function passed(result: ScenarioResult): boolean {
  return result.errors.length === 0 &&
    result.reconciliation?.violations.length === 0;
}
