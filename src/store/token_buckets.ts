/**
 * Rate limits in memory: per client GCRA's one number, when its bucket is full (docs/architecture.md#rate-limits).
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

/** The buckets of every client; a full one is forgotten at the next sweep (once per time to fill). */
export class TokenBuckets {
  #full = new Map<string, number>();
  #nextSweep = 0;

  /** Empty buckets for at most `maxClients` (past it the longest-tracked is forgotten), by the clock `now`, in ms. */
  constructor(
    private readonly maxClients = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.#full.size;
  }

  /** The milliseconds until `client` may spend one, 0 when it may now; spends nothing. */
  waitOf(client: string, rate: RateLimit): number {
    const now = this.now();
    const full = Math.max(this.#full.get(client) ?? now, now);
    return Math.max(0, full - now - (rate.burst - 1) * rate.periodMs);
  }

  /** Whether `client` spent any of its bucket that has not come back yet. */
  tracks(client: string): boolean {
    return (this.#full.get(client) ?? 0) > this.now();
  }

  /** Spends one of `client`'s writes: 0 when allowed, else the milliseconds until one is. */
  take(client: string, rate: RateLimit): number {
    const now = this.now();
    if (now >= this.#nextSweep) {
      this.#sweep(now);
      this.#nextSweep = now + rate.burst * rate.periodMs;
    }
    const wait = this.waitOf(client, rate);
    if (wait > 0) return wait;
    const tracked = this.#full.get(client);
    const full = Math.max(tracked ?? now, now);
    // Set in place, not deleted and re-added, so the Map does not churn (docs/architecture.md#one-timer-for-many-waits).
    if (tracked === undefined && this.#full.size >= this.maxClients) {
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
