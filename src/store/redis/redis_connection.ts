/**
 * What the Redis store needs of a connection, in its own words. The store is
 * written against this, and only `connection.ts`, loaded when a store
 * connects, speaks node-redis: importing the store's module (and reading its
 * documentation) never loads the client or its typings.
 * @module
 */

import type { ScriptName } from "./scripts.ts";

/** One connection to Redis; every command fails with `StoreUnavailableError` when Redis cannot answer. */
export interface RedisConnection {
  /** Whether the connection is up right now. */
  readonly isReady: boolean;
  /** Called on every (re)connection, after resubscribing. */
  onReady(listener: () => void): void;
  /** Called when an established connection is lost. */
  onLost(listener: () => void): void;
  /** Runs one of the store's scripts. */
  run(script: ScriptName, keys: string[], args: string[]): Promise<unknown>;
  /** Redis's clock (`TIME`), in milliseconds since the epoch. */
  time(): Promise<number>;
  /** `PING`. */
  ping(): Promise<void>;
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
  url: string;
  connectTimeoutMs: number;
  /** Told when the connection is lost or restored. */
  report: (message: string, level: StatusLevel) => void;
}
