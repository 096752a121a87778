/**
 * Writes whose outcome is always known before their request is answered:
 * fenced, keyed, sent again until known (docs/redis.md, Settling a write).
 * @module
 */

import {
  type Allowance,
  RateLimited,
  StoreUnavailableError,
} from "../store.ts";
import type { CommandGate } from "./command_gate.ts";
import { CommandFailed, type RedisConnection } from "./redis_connection.ts";
import { ReplicaConfirmations } from "./replica_confirmations.ts";
import {
  type ArgsOf,
  callOf,
  type KeysOf,
  LATE,
  LIMITED,
  type ScriptName,
  type WriteName,
} from "./scripts.ts";

/** The arguments every settled write takes before its own, filled in here. */
type SettledArg = "writeNumber" | "fence" | "expiry";
import { UnexpectedReply } from "./replies.ts";

/** How long a process's records outlive the second they were written in, should the process not delete them (it died). */
export const RECORD_TTL_MS = 3_600_000;

/** How long a write may stay unsettled before it gives up: well within {@linkcode RECORD_TTL_MS}. */
export const SETTLE_LIMIT_MS = 600_000;

/** How far past a write's fence its record is kept: room for Redis's clock and ours to disagree, and for a script that was already running. */
const FENCE_GRACE_MS = 1000;

/**
 * A write whose outcome could not be learnt: it may or may not have
 * happened. Answered 500 (a fault), never 503.
 *
 * @example What a caller sees
 * ```ts
 * import { WriteOutcomeUnknown } from "./settled_writes.ts";
 * const error = new WriteOutcomeUnknown("the store was closed");
 * console.log(error.name); // "WriteOutcomeUnknown"
 * ```
 */
export class WriteOutcomeUnknown extends Error {
  /** Says why the outcome could not be learnt. */
  constructor(why: string, options?: ErrorOptions) {
    super(`a write's outcome is unknown: ${why}`, options);
    this.name = "WriteOutcomeUnknown";
  }
}

/** A second of writes: where their records go, how many are unsettled, the latest fence given. */
interface Period {
  /** The hash of their records. */
  key: string;
  unsettled: number;
  lastFence: number;
  /** Whether a write has set the hash's expiry (then the next need not). */
  expires: boolean;
  /** Whether any write was sent: else there is nothing to delete. */
  used: boolean;
}

/** Options of {@linkcode SettledWrites}. */
export interface SettledWritesOptions {
  /** Prepended to the record set's key. */
  prefix: string;
  /** How long after it is sent a write may still apply: its fence. */
  windowMs: number;
  /** Where rate-limit buckets live: this, then the client. */
  allowancePrefix: string;
  /** How many replicas must hold a write before it is answered (`WAIT`); 0, the default, answers at once. */
  replicas?: number;
}

/**
 * Runs the write scripts of `scripts.ts`, settled.
 *
 * @example Setting the quote
 * ```ts ignore
 * const writes = new SettledWrites(connection, gate, { prefix: "lms:", windowMs: 1000, allowancePrefix: "lms:allowance:" });
 * await writes.run("setQuote", { quoteKey: "lms:quote", channel: "lms:changes" }, { quote: "Hello!" });
 * ```
 */
export class SettledWrites {
  #connection: RedisConnection;
  #gate: CommandGate;
  #windowMs: number;
  #allowancePrefix: string;
  /** The start of this process's records' keys: random, so no two processes share one. */
  readonly records: string;
  #next = 0;
  #periodCount = 0;
  /** One period per check; the first is the oldest whose records are kept. */
  #periods: Period[];
  /** The newest period, the one new writes go in: always the last of `#periods`. */
  #current: Period;
  /** Keys of records nothing can ask for any more, to delete. */
  #unneeded: string[] = [];
  /** Redis's clock minus ours, and how far that estimate may be off, in ms. */
  #clock = { offset: 0, error: 0 };
  #closing = new AbortController();
  /** Present when writes wait for replicas. */
  #confirmations: ReplicaConfirmations | undefined;
  /** Writes that ran and whose replicas did not confirm them in time: while any, new writes are refused. */
  #unconfirmed = 0;

  /** Writes through `gate` on `connection`. */
  constructor(
    connection: RedisConnection,
    gate: CommandGate,
    options: SettledWritesOptions,
  ) {
    this.#connection = connection;
    this.#gate = gate;
    this.#windowMs = options.windowMs;
    this.#allowancePrefix = options.allowancePrefix;
    const id = crypto.getRandomValues(new Uint8Array(8)).reduce(
      (hex, byte) => hex + byte.toString(16).padStart(2, "0"),
      "",
    );
    this.records = `${options.prefix}writes:${id}:`;
    this.#current = this.#period();
    this.#periods = [this.#current];
    if ((options.replicas ?? 0) > 0) {
      // A WAIT holds up the reads queued behind it on the connection, so
      // it waits at most a quarter of what a read may wait.
      this.#confirmations = new ReplicaConfirmations(connection, gate, {
        replicas: options.replicas!,
        timeoutMs: Math.max(1, Math.floor(options.windowMs / 4)),
      });
    }
  }

  #period(): Period {
    return {
      key: this.records + this.#periodCount++,
      unsettled: 0,
      lastFence: 0,
      expires: false,
      used: false,
    };
  }

  /** Takes a reading of Redis's clock, `redisNow`, made between our `sentAt` and `repliedAt` (Date.now()). */
  observeClock(redisNow: number, sentAt: number, repliedAt: number): void {
    this.#clock = {
      offset: redisNow - (sentAt + repliedAt) / 2,
      error: (repliedAt - sentAt) / 2 + 1,
    };
  }

  /**
   * Runs `script` settled: its result text, once known. Throws
   * `StoreUnavailableError` when the write is known never to run,
   * `RateLimited` when the client's allowance was spent, and
   * {@linkcode WriteOutcomeUnknown} when its outcome could not be learnt.
   */
  run<N extends WriteName>(
    script: N,
    keys: Omit<Record<KeysOf<N>, string>, "records">,
    args: Omit<Record<ArgsOf<N>, string>, SettledArg>,
    allowance?: Allowance,
  ): Promise<string> {
    if (this.#unconfirmed > 0) {
      return Promise.reject(
        new CommandFailed(
          "unsent",
          "Redis's replicas have not confirmed earlier writes: nothing more is sent for now",
        ),
      );
    }
    const period = this.#current;
    const fence = Math.floor(
      Date.now() + this.#clock.offset + this.#windowMs,
    );
    if (fence > period.lastFence) period.lastFence = fence;
    const head = {
      writeNumber: String(this.#next++),
      fence: String(fence),
      expiry: period.expires ? "0" : String(RECORD_TTL_MS),
    };
    // Generic over the write, TypeScript cannot see the spread complete.
    const all = { records: period.key, ...keys } as Record<KeysOf<N>, string>;
    return allowance === undefined
      ? this.#settle(
        period,
        callOf(script, all, { ...head, ...args } as Record<ArgsOf<N>, string>),
      )
      : this.#settle(
        period,
        callOf(
          `${script}Limited`,
          {
            ...all,
            bucket: this.#allowancePrefix + allowance.client,
          } as Record<KeysOf<`${N}Limited`>, string>,
          {
            ...head,
            ...args,
            period: String(allowance.rate.periodMs),
            burst: String(allowance.rate.burst),
          } as Record<ArgsOf<`${N}Limited`>, string>,
        ),
        allowance,
      );
  }

  /** Sends attempts of one write until one is answered, and reads the answer; see the module's documentation. */
  async #settle(
    period: Period,
    [script, keys, args]: [ScriptName, string[], string[]],
    allowance?: Allowance,
  ): Promise<string> {
    period.unsettled++;
    period.used = true;
    const started = performance.now();
    let inDoubt = false;
    try {
      for (let attempt = 1;; attempt++) {
        let reply: unknown;
        let session = 0;
        try {
          reply = await this.#gate.send(() => {
            session = this.#connection.session;
            return this.#connection.run(script, keys, args);
          });
        } catch (error) {
          if (!(error instanceof CommandFailed)) throw error;
          if (error.outcome === "unknown") inDoubt = true;
          // Nothing of this write ever reached Redis, or Redis refused it
          // before running it: it will never run.
          else if (!inDoubt) throw error;
          await this.#pause(attempt, this.#leftMs(started, error));
          continue;
        }
        if (typeof reply !== "string") throw new UnexpectedReply(script, reply);
        if (reply === LATE) {
          throw new StoreUnavailableError(
            "Redis ran the write after its fence: it did nothing",
          );
        }
        if (!await this.#confirmed(session, started)) {
          // The connection it ran on is gone: ask the next one.
          inDoubt = true;
          await this.#pause(attempt, this.#leftMs(started));
          continue;
        }
        // Every answer but `late` was recorded, and so set the expiry.
        period.expires = true;
        if (reply.startsWith(LIMITED)) {
          const wait = Number(reply.slice(LIMITED.length));
          if (allowance === undefined || !Number.isSafeInteger(wait)) {
            throw new UnexpectedReply(script, reply);
          }
          throw new RateLimited(wait, allowance.rate);
        }
        return reply;
      }
    } finally {
      period.unsettled--;
    }
  }

  /**
   * How long the write may still wait to be settled; throws
   * {@linkcode WriteOutcomeUnknown} when the store is closing or the time is
   * up (`cause`: what kept it unsettled).
   */
  #leftMs(started: number, cause?: unknown): number {
    const waited = performance.now() - started;
    if (this.#closing.signal.aborted || waited >= SETTLE_LIMIT_MS) {
      throw new WriteOutcomeUnknown(
        this.#closing.signal.aborted
          ? "the store was closed before Redis answered"
          : `Redis did not answer for ${Math.round(waited / 1000)} s`,
        { cause },
      );
    }
    return SETTLE_LIMIT_MS - waited;
  }

  /**
   * Whether the replicas confirm a write answered in `session` (at once
   * when none need to): asked again while the connection lasts; false once
   * it is lost, so the write is sent again on the next. While it waits,
   * new writes are refused.
   */
  async #confirmed(session: number, started: number): Promise<boolean> {
    const confirmations = this.#confirmations;
    if (confirmations === undefined) return true;
    let waiting = false;
    try {
      for (let round = 1;; round++) {
        const asked = performance.now();
        if (await confirmations.confirm(session)) return true;
        if (!waiting) {
          waiting = true;
          this.#unconfirmed++;
        }
        if (session !== this.#connection.session) return false;
        const left = this.#leftMs(started);
        // A WAIT that could not be sent answers at once: do not spin.
        if (performance.now() - asked < confirmations.timeoutMs / 2) {
          await this.#sleep(Math.min(50 * 2 ** round, 1000, left));
        }
      }
    } finally {
      if (waiting) this.#unconfirmed--;
    }
  }

  /** Waits before attempt `attempt + 1`: a back-off of up to a second, then until the connection is up, at most `leftMs` in all; at once when the store closes. */
  async #pause(attempt: number, leftMs: number): Promise<void> {
    await this.#sleep(Math.min(50 * 2 ** attempt, 1000, leftMs));
    await this.#sleep(leftMs, this.#connection.whenReady().catch(() => {}));
  }

  /** Waits `ms`, or until `until` settles, or at once when the store closes. */
  async #sleep(ms: number, until?: Promise<void>): Promise<void> {
    if (this.#closing.signal.aborted) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let closed = () => {};
    const closing = new Promise<void>((resolve) => closed = resolve);
    this.#closing.signal.addEventListener("abort", closed, { once: true });
    try {
      await Promise.race([
        closing,
        new Promise((resolve) => timer = setTimeout(resolve, ms)),
        ...(until ? [until] : []),
      ]);
    } finally {
      clearTimeout(timer);
      this.#closing.signal.removeEventListener("abort", closed);
    }
  }

  /**
   * Starts a new period and deletes the records no attempt can ask for any
   * more: those of the oldest periods in which every write is settled and
   * every fence has passed in Redis's clock (less the estimate's error and
   * a grace). Called once a second, after a clock reading.
   */
  async tick(): Promise<void> {
    this.#current = this.#period();
    this.#periods.push(this.#current);
    const passed = Date.now() + this.#clock.offset - this.#clock.error -
      FENCE_GRACE_MS;
    for (
      let oldest = this.#periods[0];
      oldest !== undefined && oldest !== this.#current &&
      oldest.unsettled === 0 && oldest.lastFence < passed;
      oldest = this.#periods[0]
    ) {
      this.#periods.shift();
      if (oldest.used) this.#unneeded.push(oldest.key);
    }
    if (this.#unneeded.length === 0) return;
    const keys = this.#unneeded.splice(0);
    try {
      await this.#gate.read(() => this.#connection.unlink(keys));
    } catch (error) {
      this.#unneeded.push(...keys);
      throw error;
    }
  }

  /** Stops settling: writes still waiting give up with {@linkcode WriteOutcomeUnknown}. */
  close(): void {
    this.#closing.abort();
  }
}
