/**
 * Writes whose outcome is always known before their request is answered (docs/redis.md, Settling a write).
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
  type SettledArg,
  type WriteName,
} from "./scripts.ts";
import { UnexpectedReply } from "./replies.ts";
import { sleep } from "../../timers/sleep.ts";

/** How long a dead process's records outlive the second they were written in. */
export const RECORD_TTL_MS = 3_600_000;

/** How long a write may stay unsettled before it gives up: well within {@linkcode RECORD_TTL_MS}. */
export const SETTLE_LIMIT_MS = 600_000;

/** How far past a write's fence its record is kept, for clock disagreement and a running script. */
const FENCE_GRACE_MS = 1000;

/** A write that may or may not have happened: answered 500 (a fault), never 503. */
export class WriteOutcomeUnknown extends Error {
  constructor(why: string, options?: ErrorOptions) {
    super(`a write's outcome is unknown: ${why}`, options);
    this.name = "WriteOutcomeUnknown";
  }
}

/** Where an attempt's answer or failure leads once an attempt before it may have run: only an answer ends the doubt. */
const ATTEMPTED = {
  answered: "confirming",
  late: "late",
  unsent: "inDoubt",
  refused: "inDoubt",
  unknown: "inDoubt",
  fault: "fault",
} as const;

/** Where the replicas' answer leads: the connection the write was answered on is the only one whose `WAIT` counts it. */
const ASKED = {
  confirmed: "known",
  unconfirmed: "unconfirmed",
  lost: "inDoubt",
  timeUp: "gaveUp",
  closed: "gaveUp",
} as const;

/** One write's way to its outcome: state, event, next state; a state that is no key ends it (docs/redis.md draws it). */
export const SETTLING = {
  // Nothing has run yet: a failure that says it never will ends the write.
  sent: { ...ATTEMPTED, unsent: "notRun", refused: "notRun" },
  inDoubt: { waited: "resent", timeUp: "gaveUp", closed: "gaveUp" },
  resent: ATTEMPTED,
  confirming: ASKED,
  unconfirmed: ASKED,
  known: { result: "settled", limited: "limited", fault: "fault" },
} as const;

type Moving = keyof typeof SETTLING;
type EventOf<S extends Moving> = keyof (typeof SETTLING)[S];
type State =
  | Moving
  | { [S in Moving]: (typeof SETTLING)[S][EventOf<S>] }[Moving];

/** One write on its way through {@linkcode SETTLING}: what its steps share. */
class Write {
  readonly started = performance.now();
  /** Attempts sent (the back-off grows with them), and the session the last went in. */
  attempts = 0;
  session = 0;
  /** The last answer, and the `WAIT`s asked since (the nap between them grows with them). */
  reply = "";
  asks = 0;
  /** How long to wait before asking again: 0 when the last `WAIT` took its time. */
  nap = 0;
  /** The error an end throws; in doubt, the cause should the write give up. */
  error: unknown;

  constructor(
    readonly period: Period,
    readonly call: [ScriptName, string[], string[]],
    readonly allowance: Allowance | undefined,
  ) {}
}

/** A second of writes: where their records go (`key`), how many are unsettled, the latest fence given. */
class Period {
  unsettled = 0;
  lastFence = 0;
  /** Whether a write has set the hash's expiry (then the next need not). */
  expires = false;
  /** Whether any write was sent: else there is nothing to delete. */
  used = false;

  constructor(readonly key: string) {}
}

export interface SettledWritesOptions {
  prefix: string;
  /** How long after it is sent a write may still apply (its fence): the command timeout. */
  timeoutMs: number;
  /** How many replicas must hold a write before it is answered (`WAIT`); 0, the default, answers at once. */
  replicas?: number;
}

/** Runs the write scripts of `scripts.ts`, settled. */
export class SettledWrites {
  /** The start of this process's records' keys: random, so no two processes share one. */
  readonly records: string;
  #next = 0;
  #periodCount = 0;
  /** One period per check, oldest first; new writes go in the last. */
  #periods: Period[] = [];
  /** Keys of records nothing can ask for any more, to delete. */
  #unneeded: string[] = [];
  /** Redis's clock minus ours, and how far that estimate may be off, in ms. */
  #clock = { offset: 0, error: 0 };
  #closing = new AbortController();
  #confirmations: ReplicaConfirmations | undefined;
  /** Writes in `unconfirmed` (ran, not yet held by the replicas): while any, new writes are refused. */
  #unconfirmed = 0;

  constructor(
    private readonly connection: RedisConnection,
    private readonly gate: CommandGate,
    private readonly options: SettledWritesOptions,
  ) {
    const id = crypto.getRandomValues(new Uint8Array(8)).toHex();
    this.records = `${options.prefix}writes:${id}:`;
    this.#periods.push(new Period(this.records + this.#periodCount++));
    if ((options.replicas ?? 0) > 0) {
      // A WAIT holds up the reads queued behind it, so it waits at most a quarter of a read's wait.
      this.#confirmations = new ReplicaConfirmations(
        connection,
        gate,
        options.replicas!,
        Math.max(1, Math.floor(options.timeoutMs / 4)),
      );
    }
  }

  /** Whether new writes are refused: the replicas have not confirmed an earlier one. */
  get refusing(): boolean {
    return this.#unconfirmed > 0;
  }

  /** Takes a reading of Redis's clock, `redisNow`, made between our `sentAt` and `repliedAt` (Date.now()). */
  observeClock(redisNow: number, sentAt: number, repliedAt: number): void {
    this.#clock = {
      offset: redisNow - (sentAt + repliedAt) / 2,
      error: (repliedAt - sentAt) / 2 + 1,
    };
  }

  /** Runs `script` settled: its result text once known, else the end's error. */
  run<N extends WriteName>(
    script: N,
    keys: Omit<Record<KeysOf<N>, string>, "records">,
    args: Omit<Record<ArgsOf<N>, string>, SettledArg>,
    allowance?: Allowance,
  ): Promise<string> {
    if (this.refusing) {
      return Promise.reject(
        new CommandFailed(
          "unsent",
          "Redis's replicas have not confirmed earlier writes: nothing more is sent for now",
        ),
      );
    }
    const period = this.#periods.at(-1)!;
    const fence = Math.floor(
      Date.now() + this.#clock.offset + this.options.timeoutMs,
    );
    if (fence > period.lastFence) period.lastFence = fence;
    const head = {
      writeNumber: String(this.#next++),
      fence: String(fence),
      expiry: period.expires ? "0" : String(RECORD_TTL_MS),
    };
    // Generic over the write, TypeScript cannot see the spread complete.
    const all = { records: period.key, ...keys } as Record<KeysOf<N>, string>;
    const call = allowance === undefined
      ? callOf(script, all, { ...head, ...args } as Record<ArgsOf<N>, string>)
      : callOf(
        `${script}Limited`,
        {
          ...all,
          bucket: `${this.options.prefix}allowance:${allowance.client}`,
        } as Record<KeysOf<`${N}Limited`>, string>,
        {
          ...head,
          ...args,
          period: String(allowance.rate.periodMs),
          burst: String(allowance.rate.burst),
        } as Record<ArgsOf<`${N}Limited`>, string>,
      );
    return this.#settle(new Write(period, call, allowance));
  }

  #steps: { [S in Moving]: (write: Write) => Promise<EventOf<S>> } = {
    sent: (write) => this.#attempt(write),
    inDoubt: (write) => this.#pause(write),
    resent: (write) => this.#attempt(write),
    confirming: (write) => this.#ask(write),
    // The nap is this state's, not the last ask's: new writes are refused from the first `WAIT` that says no.
    unconfirmed: async (write) => {
      if (write.nap > 0) await sleep(write.nap, this.#closing.signal);
      return this.#ask(write);
    },
    known: (write) => Promise.resolve(this.#read(write)),
  };

  /** Moves one write through {@linkcode SETTLING} from `sent` to an end: its result, or the end's error. */
  async #settle(write: Write): Promise<string> {
    const period = write.period;
    period.unsettled++;
    period.used = true;
    let state: State = "sent";
    try {
      while (state in SETTLING) {
        const from = state as Moving;
        const event = await this.#steps[from](write);
        state = (SETTLING[from] as Record<typeof event, State>)[event];
        // `#unconfirmed` counts the writes in that state.
        if (from === "unconfirmed") this.#unconfirmed--;
        if (state === "unconfirmed") this.#unconfirmed++;
      }
    } finally {
      period.unsettled--;
      if (state === "unconfirmed") this.#unconfirmed--;
    }
    if (state === "settled") return write.reply;
    throw write.error;
  }

  /** Sends an attempt (`sent`, `resent`) and tells what came of it. */
  async #attempt(write: Write): Promise<EventOf<"sent">> {
    write.attempts++;
    const [script, keys, args] = write.call;
    let reply: unknown;
    try {
      reply = await untilClosed(
        this.gate.send(() => {
          write.session = this.connection.session;
          return this.connection.run(script, keys, args);
        }),
        this.#closing.signal,
      );
    } catch (error) {
      write.error = error;
      return error instanceof CommandFailed ? error.outcome : "fault";
    }
    if (typeof reply !== "string") {
      write.error = new UnexpectedReply(script, reply);
      return "fault";
    }
    write.reply = reply;
    write.asks = 0;
    if (reply !== LATE) return "answered";
    write.error = new StoreUnavailableError(
      "Redis ran the write after its fence: it did nothing",
    );
    return "late";
  }

  /** How long the write may still wait to be settled, or why it gives up (`write.error`, with `cause`). */
  #left(write: Write, cause: unknown): number | "timeUp" | "closed" {
    const waited = performance.now() - write.started;
    const closed = this.#closing.signal.aborted;
    if (!closed && waited < SETTLE_LIMIT_MS) return SETTLE_LIMIT_MS - waited;
    write.error = new WriteOutcomeUnknown(
      closed
        ? "the store was closed before Redis answered"
        : `Redis did not answer for ${Math.round(waited / 1000)} s`,
      { cause },
    );
    return closed ? "closed" : "timeUp";
  }

  /** Waits before the next attempt (`inDoubt`): a back-off of up to a second, then until the connection is up; at once when the store closes. */
  async #pause(write: Write): Promise<EventOf<"inDoubt">> {
    const left = this.#left(write, write.error);
    if (typeof left !== "number") return left;
    await sleep(
      Math.min(50 * 2 ** write.attempts, 1000, left),
      this.#closing.signal,
    );
    await sleep(
      left,
      this.#closing.signal,
      this.connection.whenReady().catch(() => {}),
    );
    return "waited";
  }

  /** Asks whether the replicas hold the write answered in `write.session` (`confirming`, `unconfirmed`). */
  async #ask(write: Write): Promise<EventOf<"confirming">> {
    const confirmations = this.#confirmations;
    if (confirmations === undefined) return "confirmed";
    write.asks++;
    const asked = performance.now();
    if (await confirmations.confirm(write.session)) return "confirmed";
    if (write.session !== this.connection.session) {
      write.error = undefined;
      return "lost";
    }
    const left = this.#left(write, undefined);
    if (typeof left !== "number") return left;
    // A WAIT that could not be sent answers at once: do not spin.
    write.nap = performance.now() - asked < confirmations.timeoutMs / 2
      ? Math.min(50 * 2 ** write.asks, 1000, left)
      : 0;
    return "unconfirmed";
  }

  /** Reads a confirmed answer (`known`): recorded, like every answer but `late`, so its hash's expiry is set. */
  #read(write: Write): EventOf<"known"> {
    write.period.expires = true;
    if (!write.reply.startsWith(LIMITED)) return "result";
    const wait = Number(write.reply.slice(LIMITED.length));
    if (write.allowance === undefined || !Number.isSafeInteger(wait)) {
      write.error = new UnexpectedReply(write.call[0], write.reply);
      return "fault";
    }
    write.error = new RateLimited(wait, write.allowance.rate);
    return "limited";
  }

  /** Starts a new period and deletes the records of settled periods whose fences have passed. */
  async tick(): Promise<void> {
    const current = new Period(this.records + this.#periodCount++);
    this.#periods.push(current);
    const passed = Date.now() + this.#clock.offset - this.#clock.error -
      FENCE_GRACE_MS;
    for (
      let oldest = this.#periods[0];
      oldest !== undefined && oldest !== current &&
      oldest.unsettled === 0 && oldest.lastFence < passed;
      oldest = this.#periods[0]
    ) {
      this.#periods.shift();
      if (oldest.used) this.#unneeded.push(oldest.key);
    }
    if (this.#unneeded.length === 0) return;
    const keys = this.#unneeded.splice(0);
    try {
      await this.gate.read(() => this.connection.unlink(keys));
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

/** A reply a frozen Redis never sends must not hold a closing store: the write is then in doubt. */
function untilClosed<T>(reply: Promise<T>, closing: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const closed = () =>
      reject(new CommandFailed("unknown", "the store was closed"));
    if (closing.aborted) closed();
    closing.addEventListener("abort", closed, { once: true });
    reply.then(resolve, reject).finally(() =>
      closing.removeEventListener("abort", closed)
    );
  });
}
