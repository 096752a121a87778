/**
 * What may be sent on one Redis connection, and how long a reply is waited
 * for: the store's every command goes through a gate, so no request waits
 * on Redis without bound and a Redis that stalls does not grow the process.
 * @module
 */

import { Deadlines, type Wait } from "../../timers/deadlines.ts";
import { CommandFailed, type RedisConnection } from "./redis_connection.ts";

/** Limits of a {@linkcode CommandGate}. */
export interface GateOptions {
  /** How long a read waits for its reply before it fails; it is checked every quarter of it, so it fails between 1 and 1.25 times this. */
  timeoutMs: number;
  /** How many commands may wait for Redis at once; past it nothing more is sent. */
  maxPending: number;
}

/**
 * Sends the store's commands on `connection`, within three bounds:
 * - **A read waits at most the timeout**, then fails unavailable (503).
 *   node-redis's own timeout is off (`connection.ts`): it stopped counting
 *   once a command was written, so a Redis that stops reading (frozen, or a
 *   network that drops packets) would have held the request forever.
 * - **A connection known to be stalled gets nothing new**: once a command
 *   has waited past the timeout and no reply has come since, every new
 *   command is refused at once without being sent, until a reply comes or
 *   the connection is made anew.
 * - **At most `maxPending` commands wait at once.** A command past its
 *   timeout stays queued in the client until Redis answers, so past the
 *   bound a command is not sent at all: a stalled Redis cannot grow the
 *   process's memory without bound.
 *
 * A write attempt ({@linkcode CommandGate.send}) is never failed by the
 * timeout: whether it ran is known only from its reply or, once the
 * connection is lost, by asking again (`settled_writes.ts`).
 *
 * @example Reading through a gate
 * ```ts ignore
 * const gate = new CommandGate(connection, { timeoutMs: 1000, maxPending: 1000 });
 * const quote = await gate.read(() => connection.get("lms:quote"));
 * ```
 */
export class CommandGate {
  #connection: Pick<RedisConnection, "isReady" | "onReady">;
  #maxPending: number;
  #pending = 0;
  #stalled = false;
  /** Every command waiting for its reply; a read's item fails it at the timeout. */
  #waiting: Deadlines<((error: Error) => void) | undefined>;

  /** A gate on `connection` with these limits. */
  constructor(
    connection: Pick<RedisConnection, "isReady" | "onReady">,
    options: GateOptions,
  ) {
    this.#connection = connection;
    this.#maxPending = options.maxPending;
    this.#waiting = new Deadlines(options.timeoutMs, (fail) => {
      this.#stalled = true;
      fail?.(new CommandFailed("unknown", "Redis did not answer in time"));
    });
    // A connection made anew has nothing of the old one's queue.
    connection.onReady(() => this.#stalled = false);
  }

  /** Whether a command would be sent now: the connection is up, not stalled, and below the bound. */
  get open(): boolean {
    return this.#connection.isReady && !this.#stalled &&
      this.#pending < this.#maxPending;
  }

  /** Runs a read: its reply, or a failure at the timeout; refused at once (`unsent`) when the gate is not open. */
  read<T>(command: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.#start(command, resolve, reject, reject)
    );
  }

  /**
   * Sends a write attempt: its reply, or {@linkcode CommandFailed} saying
   * what is known of it. Refused at once (`unsent`) when the gate is not
   * open; otherwise it waits for the reply or the connection's loss, however
   * long that takes, marking the connection stalled at the timeout.
   */
  send<T>(command: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) =>
      this.#start(command, resolve, reject)
    );
  }

  /**
   * Sends `command` unless the gate is not open (then fails at once), and
   * settles with its reply. `expire` given means a read: it is failed at
   * the timeout, and its late reply goes nowhere.
   */
  #start<T>(
    command: () => Promise<T>,
    resolve: (value: T) => void,
    reject: (error: Error) => void,
    expire?: (error: Error) => void,
  ): void {
    if (!this.open) {
      return reject(
        new CommandFailed(
          "unsent",
          this.#connection.isReady
            ? "Redis is not keeping up: nothing more is sent to it for now"
            : "Redis is unavailable",
        ),
      );
    }
    this.#pending++;
    const wait = this.#waiting.add(expire);
    command().then((value) => {
      this.#replied(wait);
      resolve(value);
    }, (error) => {
      this.#replied(wait);
      reject(error);
    });
  }

  #replied(wait: Wait<unknown>): void {
    this.#pending--;
    this.#stalled = false;
    this.#waiting.delete(wait as Wait<((error: Error) => void) | undefined>);
  }

  /** Stops the timer; commands still waiting are left to the connection's close. */
  close(): void {
    this.#waiting.close();
  }
}
