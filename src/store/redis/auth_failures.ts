/**
 * Failed authentications counted in Redis, so every process shares each
 * client's count. "Must this client wait?" is answered from memory for a
 * client that has not failed here lately (no round trip), and in Redis,
 * counting the try, for one that has.
 * @module
 */

import {
  type AuthFailures,
  type AuthTry,
  type Awaitable,
  FREE_TRY,
} from "../store.ts";
import { UnexpectedReply } from "./replies.ts";
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
      if (notice.kind === "limited") this.#wait(notice.client, notice.waitMs);
    });
  }

  /** Remembers that `client` must wait `waitMs`. */
  #wait(client: string, waitMs: number): void {
    if (this.#waiting.size >= MAX_WAITING) {
      this.#waiting.delete(this.#waiting.keys().next().value!);
    }
    this.#waiting.set(client, Date.now() + waitMs);
  }

  authWait(client: string, rate: RateLimit): Awaitable<AuthTry> {
    const waitMs = this.#knownWait(client, rate);
    if (waitMs > 0) return { waitMs, counted: false };
    // A client that never failed here costs no round trip; one that did
    // pays its try in Redis first, so that processes answering it at once
    // cannot each let a guess through while the news is on its way.
    if (!this.#local.tracks(client)) return FREE_TRY;
    return this.#count(client, rate).then((answer) => {
      if (answer === undefined || answer.counted) {
        return { waitMs: 0, counted: answer !== undefined };
      }
      return { waitMs: Math.max(1, answer.waitMs), counted: false };
    });
  }

  async countAuthFailure(client: string, rate: RateLimit): Promise<void> {
    await this.#count(client, rate);
  }

  refundAuthTry(client: string, rate: RateLimit): void {
    this.#local.giveBack(client, rate);
    const { authFailures } = this.#kernel.keys;
    this.#kernel.read((c) =>
      c.run(...callOf("authRefund", { bucket: authFailures + client }, {
        period: String(rate.periodMs),
      }))
    ).catch(() => {
      // One try stays counted: the client waits a period sooner, no more.
    });
  }

  /** The wait this process knows of: its own count, and what Redis announced. */
  #knownWait(client: string, rate: RateLimit): number {
    const local = this.#local.waitOf(client, rate);
    const until = this.#waiting.get(client);
    if (until === undefined) return local;
    const shared = until - Date.now();
    if (shared <= 0) this.#waiting.delete(client);
    return Math.max(local, shared);
  }

  /**
   * Counts a try in Redis, and here unless Redis refused it: `undefined`
   * when Redis did not answer, and this process's count stands alone.
   */
  async #count(
    client: string,
    rate: RateLimit,
  ): Promise<{ counted: boolean; waitMs: number } | undefined> {
    const { authFailures, channel } = this.#kernel.keys;
    let reply: unknown;
    try {
      reply = await this.#kernel.read((c) =>
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
      this.#local.take(client, rate);
      return undefined;
    }
    if (!Array.isArray(reply) || reply.length !== 2) {
      throw new UnexpectedReply("authFailure", reply);
    }
    const counted = reply[0] === 1;
    const waitMs = Number(reply[1]);
    if (counted) this.#local.take(client, rate);
    // None left: this process refuses the client from memory at once,
    // before the notice to every process comes back.
    if (waitMs > 0) this.#wait(client, waitMs);
    return { counted, waitMs };
  }
}
