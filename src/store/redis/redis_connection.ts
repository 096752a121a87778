/**
 * What the Redis store needs of a connection, in its own words. The store is
 * written against this, and only `connection.ts`, loaded when a store
 * connects, speaks node-redis: importing the store's module (and reading its
 * documentation) never loads the client or its typings.
 * @module
 */

import { StoreUnavailableError } from "../store.ts";
import type { ScriptName } from "./scripts.ts";

/**
 * What is known of a command that got no reply:
 * - `unsent`: it never left this process (no connection, or refused before
 *   sending), so it will never run;
 * - `refused`: Redis answered it with an error about its own state (out of
 *   memory, loading, a replica, ...), so it did not run;
 * - `unknown`: it may have been sent and no reply came (the connection was
 *   lost), so it may have run, or may still run.
 */
export type CommandOutcome = "unsent" | "refused" | "unknown";

/**
 * A command that failed because Redis could not be reached or refused for
 * its own reasons; answered 503 unless a write must first be settled.
 *
 * @example Telling a command that never left from one that may have run
 * ```ts
 * import { CommandFailed } from "./redis_connection.ts";
 * const failure = new CommandFailed("unsent", "no connection to Redis");
 * console.log(failure.outcome); // "unsent"
 * ```
 */
export class CommandFailed extends StoreUnavailableError {
  /** Whether the command may have run. */
  readonly outcome: CommandOutcome;

  /** A failure with what is known of the command's fate. */
  constructor(
    outcome: CommandOutcome,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "CommandFailed";
    this.outcome = outcome;
  }
}

/** One connection to Redis; every command fails with {@linkcode CommandFailed} when Redis cannot answer. */
export interface RedisConnection {
  /** Whether the connection is up right now. */
  readonly isReady: boolean;
  /**
   * Counts the connections made: it changes whenever a new one replaces the
   * last (a reconnection, or a move to another master), so a `WAIT` sent in
   * the same session as a write is known to count that write.
   */
  readonly session: number;
  /** Called on every (re)connection, after resubscribing. */
  onReady(listener: () => void): void;
  /** Called when an established connection is lost. */
  onLost(listener: () => void): void;
  /** Resolves once the connection is up (at once if it is); rejects once it is closed. */
  whenReady(): Promise<void>;
  /** Runs one of the store's scripts. */
  run(script: ScriptName, keys: string[], args: string[]): Promise<unknown>;
  /** `PING`. */
  ping(): Promise<void>;
  /** A write that holds nothing for long (`SET key 1 PX 10000`): fails when Redis refuses writes. */
  probeWrite(key: string): Promise<void>;
  /**
   * `WAIT replicas timeoutMs`: how many replicas hold every write sent on
   * this connection so far (in this session), once `replicas` do or the
   * time is up.
   */
  wait(replicas: number, timeoutMs: number): Promise<number>;
  /** `SET key value NX`: whether it was set. */
  setIfAbsent(key: string, value: string): Promise<boolean>;
  /** `GET`. */
  get(key: string): Promise<string | null>;
  /** `HGET`. */
  hGet(key: string, field: string): Promise<string | null>;
  /** `HLEN`. */
  hLen(key: string): Promise<number>;
  /** `LRANGE`. */
  lRange(key: string, start: number, stop: number): Promise<string[]>;
  /** `ZRANGE`. */
  zRange(key: string, start: number, stop: number): Promise<string[]>;
  /** `UNLINK`: deletes the keys, freeing their memory in the background. */
  unlink(keys: string[]): Promise<void>;
  /** `SUBSCRIBE`, kept across reconnections. */
  subscribe(
    channel: string,
    listener: (message: string) => void,
  ): Promise<void>;
  /** Closes gracefully. */
  close(): Promise<void>;
}

/** Whether a status line tells of trouble (`error`) or of its end (`info`). */
export type StatusLevel = "error" | "info";

/** How a connection is opened. */
export interface ConnectionOptions {
  /** `redis://`, `rediss://` or `redis+sentinel://` (`store_url.ts`). */
  url: string;
  connectTimeoutMs: number;
  /** Told when the connection is lost or restored. */
  report: (message: string, level: StatusLevel) => void;
}
