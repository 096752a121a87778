/**
 * Every command goes through a gate, so no request waits on Redis without bound and a stalled
 * Redis does not grow the process (docs/redis.md, "The command gate").
 * @module
 */

import { Deadlines } from "../../timers/deadlines.ts";
import { CommandFailed, type RedisConnection } from "./redis_connection.ts";

export interface GateOptions {
  /** Checked every quarter of it, so a read fails between 1 and 1.25 times this. */
  timeoutMs: number;
  maxPending: number;
}

/** Bounds reads by the timeout, refuses new commands on a stalled connection, caps those waiting. */
export class CommandGate {
  #maxPending: number;
  #pending = 0;
  #stalled = false;
  #waiting: Deadlines<((error: Error) => void) | undefined>;

  constructor(
    private readonly connection: Pick<RedisConnection, "isReady" | "onReady">,
    options: GateOptions,
  ) {
    this.#maxPending = options.maxPending;
    this.#waiting = new Deadlines(options.timeoutMs, (fail) => {
      this.#stalled = true;
      fail?.(new CommandFailed("unknown", "Redis did not answer in time"));
    });
    // A connection made anew has nothing of the old one's queue.
    connection.onReady(() => this.#stalled = false);
  }

  get open(): boolean {
    return this.connection.isReady && !this.#stalled &&
      this.#pending < this.#maxPending;
  }

  /** Refused at once (`unsent`) when the gate is not open. */
  read<T>(command: () => Promise<T>): Promise<T> {
    return this.#start(command, true);
  }

  /** Waits for the reply or the connection's loss, however long; marks the connection stalled at the timeout. */
  send<T>(command: () => Promise<T>): Promise<T> {
    return this.#start(command, false);
  }

  /** A read fails at the timeout, its late reply going nowhere. */
  #start<T>(command: () => Promise<T>, read: boolean): Promise<T> {
    if (!this.open) {
      return Promise.reject(
        new CommandFailed(
          "unsent",
          this.connection.isReady
            ? "Redis is not keeping up: nothing more is sent to it for now"
            : "Redis is unavailable",
        ),
      );
    }
    return new Promise<T>((resolve, reject) => {
      this.#pending++;
      const wait = this.#waiting.add(read ? reject : undefined);
      command().finally(() => {
        this.#pending--;
        this.#stalled = false;
        this.#waiting.delete(wait);
      }).then(resolve, reject);
    });
  }

  /** Commands still waiting are left to the connection's close. */
  close(): void {
    this.#waiting.close();
  }
}
