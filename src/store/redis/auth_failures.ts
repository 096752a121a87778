/**
 * Failed authentications counted in Redis, so every process shares each
 * client's count; the answer to "must this client wait?" stays in memory,
 * learnt from the notice Redis publishes when a client runs out, so an
 * authenticated request costs no round trip.
 * @module
 */

import type { AuthFailures } from "../store.ts";
import { type RateLimit, TokenBuckets } from "../token_buckets.ts";
import type { RedisKernel } from "./kernel.ts";
import { callOf } from "./scripts.ts";

/** How many waiting clients are remembered at most; past it the oldest is forgotten. */
const MAX_WAITING = 100_000;

/** {@linkcode AuthFailures} on Redis. */
export class RedisAuthFailures implements AuthFailures {
  #kernel: RedisKernel;
  /** Per client: until when (Date.now) it must wait, as any process heard. */
  #waiting = new Map<string, number>();
  /**
   * This process's own count: never more than the shared one, and what
   * still holds while Redis does not answer.
   */
  #local = new TokenBuckets();

  constructor(kernel: RedisKernel) {
    this.#kernel = kernel;
    kernel.onNotice((notice) => {
      if (notice.kind !== "limited") return;
      if (this.#waiting.size >= MAX_WAITING) {
        this.#waiting.delete(this.#waiting.keys().next().value!);
      }
      this.#waiting.set(notice.client, Date.now() + notice.waitMs);
    });
  }

  authWait(client: string, rate: RateLimit): number {
    const local = this.#local.waitOf(client, rate);
    const until = this.#waiting.get(client);
    if (until === undefined) return local;
    const shared = until - Date.now();
    if (shared <= 0) this.#waiting.delete(client);
    return Math.max(local, shared);
  }

  async countAuthFailure(client: string, rate: RateLimit): Promise<void> {
    this.#local.take(client, rate);
    const { authFailures, channel } = this.#kernel.keys;
    try {
      await this.#kernel.read((c) =>
        c.run(...callOf("authFailure", {
          bucket: authFailures + client,
          channel,
        }, {
          client,
          period: String(rate.periodMs),
          burst: String(rate.burst),
        }))
      );
    } catch {
      // The request is answered 401 all the same; the local count holds.
    }
  }
}
