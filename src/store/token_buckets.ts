/**
 * Rate limits in memory: a token bucket per client, kept as the one number
 * GCRA needs (the moment the bucket will be full again), so a client costs
 * one map entry, and a client whose bucket is full again costs nothing.
 * @module
 */

/**
 * A write allowance: `burst` writes at once, and one more every `periodMs`.
 *
 * @example Five at once, then one every ten seconds
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler, type RateLimit } from "@lms/light-messaging";
 * const rate: RateLimit = { burst: 5, periodMs: 10_000 };
 * const handler = createHandler({ rateLimit: rate });
 * const post = () =>
 *   handler(new Request("http://localhost/quote", { method: "POST", body: "Hi!" }));
 * for (let i = 0; i < 5; i++) assert.equal((await post()).status, 200);
 * assert.equal((await post()).status, 429);
 * ```
 */
export interface RateLimit {
  /** How many writes a client with a full bucket may make at once. */
  burst: number;
  /** How long the bucket takes to gain one write back, in milliseconds. */
  periodMs: number;
}

/** Options of {@linkcode TokenBuckets}. */
export interface TokenBucketsOptions {
  /**
   * How many clients are tracked at most. Past it the longest-tracked
   * client is forgotten (its bucket starts full again), so no number of
   * addresses can grow memory past it. Default 100,000.
   */
  maxClients?: number;
  /** The clock, in milliseconds. Default `Date.now`. */
  now?: () => number;
}

/**
 * The buckets of every client; a bucket that has filled up again is
 * forgotten at the next sweep, which runs at most once per time a bucket
 * takes to fill, so it costs little per write.
 */
export class TokenBuckets {
  /** Per client: when its bucket is full again (GCRA's theoretical arrival time). */
  #full = new Map<string, number>();
  #maxClients: number;
  #now: () => number;
  #nextSweep = 0;

  /** Empty buckets, with these bounds. */
  constructor(options: TokenBucketsOptions = {}) {
    this.#maxClients = options.maxClients ?? 100_000;
    this.#now = options.now ?? Date.now;
  }

  /** How many clients are tracked now. */
  get size(): number {
    return this.#full.size;
  }

  /** The milliseconds until `client` may spend one, 0 when it may now; spends nothing. */
  waitOf(client: string, rate: RateLimit): number {
    const now = this.#now();
    const full = Math.max(this.#full.get(client) ?? now, now);
    return Math.max(0, full - now - (rate.burst - 1) * rate.periodMs);
  }

  /** Whether `client` spent any of its bucket that has not come back yet. */
  tracks(client: string): boolean {
    return (this.#full.get(client) ?? 0) > this.#now();
  }

  /** Spends one of `client`'s writes: 0 when allowed, else the milliseconds until one is. */
  take(client: string, rate: RateLimit): number {
    const now = this.#now();
    if (now >= this.#nextSweep) {
      this.#sweep(now);
      this.#nextSweep = now + rate.burst * rate.periodMs;
    }
    const wait = this.waitOf(client, rate);
    if (wait > 0) return wait;
    const tracked = this.#full.get(client);
    const full = Math.max(tracked ?? now, now);
    // A tracked client's entry is updated in place rather than deleted and
    // added again: a long-lived Map with a delete and an add per write
    // rebuilds its table every few writes, and once the Map has aged into
    // V8's old generation each rebuild is old-space garbage. So the map's
    // order is the order clients were first tracked, which the cap follows.
    if (tracked === undefined && this.#full.size >= this.#maxClients) {
      this.#full.delete(this.#full.keys().next().value!);
    }
    this.#full.set(client, full + rate.periodMs);
    return 0;
  }

  #sweep(now: number): void {
    for (const [client, full] of this.#full) {
      if (full <= now) this.#full.delete(client);
    }
  }
}
