/**
 * Copies kept only while subscribed, dropped on every notice and never across an epoch, so a
 * process never serves a copy it might not hear about.
 * @module
 */

import type { Awaitable } from "../store.ts";

/** The state of the change subscription the copies depend on. */
export interface Subscription {
  live(): boolean;
  /** Bumped on every (re)connection: notices may have been missed before it. */
  epoch(): number;
}

/** One shared value, read from Redis on a miss and kept until it changes. */
export class LocalCopy<T> {
  #value: T | undefined;
  /** Bumped by every change, so a read that overlapped one is not kept. */
  #generation = 0;
  #epoch = -1;
  /** Shared by every request that misses meanwhile. */
  #pending: Promise<T> | undefined;

  constructor(private readonly subscription: Subscription) {}

  changed(): void {
    this.#generation++;
    this.#value = undefined;
    this.#pending = undefined;
  }

  read(load: () => Promise<T>): Awaitable<T> {
    const subscription = this.subscription;
    const live = subscription.live();
    if (
      live && this.#value !== undefined && this.#epoch === subscription.epoch()
    ) {
      return this.#value;
    }
    if (live && this.#pending) return this.#pending;
    const generation = this.#generation;
    const epoch = subscription.epoch();
    const pending = load().then((value) => {
      if (
        live && subscription.live() && generation === this.#generation &&
        epoch === subscription.epoch()
      ) {
        this.#value = value;
        this.#epoch = epoch;
      }
      return value;
    }).finally(() => {
      if (this.#pending === pending) this.#pending = undefined;
    });
    if (live) this.#pending = pending;
    return pending;
  }
}

/** Tokens of users seen authenticating, kept like the copies; only found ones, so at most the users. */
export class KeptTokens {
  #tokens = new Map<string, string>();
  #epoch = -1;
  /** So a lookup that overlapped a removal is not kept. */
  #removals = 0;

  constructor(private readonly subscription: Subscription) {}

  /** Removed, or registered anew. */
  forget(name: string): void {
    this.#removals++;
    this.#tokens.delete(name);
  }

  tokenOf(
    name: string,
    load: () => Promise<string | null | undefined>,
  ): Awaitable<string | undefined> {
    const subscription = this.subscription;
    const live = subscription.live();
    if (live && this.#epoch === subscription.epoch()) {
      const kept = this.#tokens.get(name);
      if (kept !== undefined) return kept;
    }
    const epoch = subscription.epoch();
    const removals = this.#removals;
    return load().then((token) => {
      if (token == null) return undefined;
      if (
        live && subscription.live() && epoch === subscription.epoch() &&
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
