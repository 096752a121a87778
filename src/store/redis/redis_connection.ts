/**
 * What the store needs of a connection, so that only `connection.ts`, loaded on connect, speaks node-redis.
 * @module
 */

import { StoreUnavailableError } from "../store.ts";
import type { ScriptName } from "./scripts.ts";

/** Answered 503 unless a write must first be settled. */
export class CommandFailed extends StoreUnavailableError {
  constructor(
    /** `unsent` and `refused` never ran; `unknown` may have run, or may still. */
    readonly outcome: "unsent" | "refused" | "unknown",
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "CommandFailed";
  }
}

/** One connection to Redis; every command fails with {@linkcode CommandFailed} when Redis cannot answer. */
export interface RedisConnection {
  readonly isReady: boolean;
  /** Changes with every new connection, so a `WAIT` in a write's session is known to count it. */
  readonly session: number;
  /** After resubscribing. */
  onReady(listener: () => void): void;
  onLost(listener: () => void): void;
  /** Rejects once closed. */
  whenReady(): Promise<void>;
  run(script: ScriptName, keys: string[], args: string[]): Promise<unknown>;
  /** `SET key 1 PX 10000`: fails when Redis refuses writes. */
  probeWrite(key: string): Promise<void>;
  /** How many replicas hold every write of this session, once `replicas` do or at the timeout. */
  wait(replicas: number, timeoutMs: number): Promise<number>;
  setIfAbsent(key: string, value: string): Promise<boolean>;
  get(key: string): Promise<string | null>;
  hGet(key: string, field: string): Promise<string | null>;
  hLen(key: string): Promise<number>;
  lRange(key: string, start: number, stop: number): Promise<string[]>;
  zRange(key: string, start: number, stop: number): Promise<string[]>;
  unlink(keys: string[]): Promise<void>;
  /** Kept across reconnections. */
  subscribe(
    channel: string,
    listener: (message: string) => void,
  ): Promise<void>;
  close(): Promise<void>;
}

export interface ConnectionOptions {
  url: string;
  connectTimeoutMs: number;
  report: (message: string, level: "error" | "info") => void;
}
