/**
 * Copies kept so a process never serves one it might not hear about (docs/redis.md, "Local copies").
 * @module
 */

import type { Awaitable, ChangeFeed } from "../store.ts";

/** Whose epoch the copies follow: bumped on every (re)connection, `undefined` while notices may be missed. */
type Feed = Pick<ChangeFeed, "subscriptionEpoch">;

/** One shared value, read from Redis on a miss and kept until it changes. */
export class LocalCopy<T> {
  #value: T | undefined;
  /** Bumped by every change, so a read that overlapped one is not kept. */
  #generation = 0;
  #epoch: number | undefined;
  /** Shared by every request that misses meanwhile. */
  #pending: Promise<T> | undefined;

  constructor(private readonly feed: Feed) {}

  changed(): void {
    this.#generation++;
    this.#value = undefined;
    this.#pending = undefined;
  }

  read(load: () => Promise<T>): Awaitable<T> {
    const epoch = this.feed.subscriptionEpoch();
    if (epoch !== undefined) {
      if (this.#value !== undefined && this.#epoch === epoch) {
        return this.#value;
      }
      if (this.#pending) return this.#pending;
    }
    const generation = this.#generation;
    const pending = load().then((value) => {
      if (
        epoch !== undefined && generation === this.#generation &&
        epoch === this.feed.subscriptionEpoch()
      ) {
        this.#value = value;
        this.#epoch = epoch;
      }
      return value;
    }).finally(() => {
      if (this.#pending === pending) this.#pending = undefined;
    });
    if (epoch !== undefined) this.#pending = pending;
    return pending;
  }
}

/** Tokens of users seen authenticating, kept like the copies; only found ones, so at most the users. */
export class KeptTokens {
  #tokens = new Map<string, string>();
  #epoch: number | undefined;
  /** So a lookup that overlapped a removal is not kept. */
  #removals = 0;

  constructor(private readonly feed: Feed) {}

  /** Removed, or registered anew. */
  forget(name: string): void {
    this.#removals++;
    this.#tokens.delete(name);
  }

  tokenOf(
    name: string,
    load: () => Promise<string | null | undefined>,
  ): Awaitable<string | undefined> {
    const epoch = this.feed.subscriptionEpoch();
    if (epoch !== undefined && this.#epoch === epoch) {
      const kept = this.#tokens.get(name);
      if (kept !== undefined) return kept;
    }
    const removals = this.#removals;
    return load().then((token) => {
      if (token == null) return undefined;
      if (
        epoch !== undefined && epoch === this.feed.subscriptionEpoch() &&
        removals === this.#removals
      ) {
        if (this.#epoch !== epoch) {
          this.#tokens.clear();
          this.#epoch = epoch;
        }
        this.#tokens.set(name, token);
      }
      return token;
    });
  }
}
