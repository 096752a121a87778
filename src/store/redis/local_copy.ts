/**
 * Local copies of shared values, kept only while they are known to be
 * current: while subscribed to the change channel, dropped on every change
 * notice, and never across a reconnection of the subscription (an epoch), so
 * a process can never serve a copy it might not hear about.
 * @module
 */

import type { Awaitable } from "../store.ts";

/** The state of the change subscription the copies depend on. */
export interface Subscription {
  /** Whether notices are being received right now. */
  live(): boolean;
  /** Bumped on every (re)connection: notices may have been missed before it. */
  epoch(): number;
}

/** One shared value, read from Redis on a miss and kept until it changes. */
export class LocalCopy<T> {
  #subscription: Subscription;
  #value: T | undefined;
  /** Bumped by every change, so a read that overlapped one is not kept. */
  #generation = 0;
  /** The subscription epoch the value was taken under. */
  #epoch = -1;
  /** A read in progress, shared by every request that misses meanwhile. */
  #pending: Promise<T> | undefined;

  /** A copy that trusts `subscription` for its currency. */
  constructor(subscription: Subscription) {
    this.#subscription = subscription;
  }

  /** Drops the value: someone changed it. */
  changed(): void {
    this.#generation++;
    this.#value = undefined;
    this.#pending = undefined;
  }

  /** The value from the copy when it is current, else from `load`. */
  read(load: () => Promise<T>): Awaitable<T> {
    const subscription = this.#subscription;
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
      if (this.#pending === pending) this.#pending = undefined;
      return value;
    }, (error) => {
      if (this.#pending === pending) this.#pending = undefined;
      throw error;
    });
    if (live) this.#pending = pending;
    return pending;
  }
}

/**
 * Tokens of users seen authenticating, so a request needs no round trip to
 * check one. Kept under the same rule as the copies, and dropped by a
 * removal notice naming the user. Only found tokens are kept, so it holds at
 * most the registered users.
 */
export class KeptTokens {
  #subscription: Subscription;
  #tokens = new Map<string, string>();
  #epoch = -1;
  /** Bumped by every removal heard of, so a lookup that overlapped one is not kept. */
  #removals = 0;

  /** Tokens that trust `subscription` for their currency. */
  constructor(subscription: Subscription) {
    this.#subscription = subscription;
  }

  /** Forgets the token of `name`: the user was removed, or registered anew. */
  forget(name: string): void {
    this.#removals++;
    this.#tokens.delete(name);
  }

  /** The token of `name` from the kept ones when current, else from `load`. */
  tokenOf(
    name: string,
    load: () => Promise<string | null | undefined>,
  ): Awaitable<string | undefined> {
    const subscription = this.#subscription;
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
