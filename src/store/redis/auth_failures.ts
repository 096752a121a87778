/**
 * Failed authentications counted in Redis, shared by every process; only a
 * client that failed here lately costs a round trip.
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

/** How many waiting clients are remembered at most; past it the oldest is forgotten. */
const MAX_WAITING = 100_000;

/** A credential as the scripts compare it: the name and its token's digest. */
type Presented = { name: string; digest: string } | null;

/** {@linkcode AuthFailures} on Redis. */
export class RedisAuthFailures implements AuthFailures {
  #kernel: RedisKernel;
  /** Per client: until when (Date.now) it must wait, as any process heard. */
  #waiting = new Map<string, number>();
  /** This process's own count: what still holds while Redis does not answer. */
  #local = new TokenBuckets();

  constructor(kernel: RedisKernel) {
    this.#kernel = kernel;
    kernel.onNotice((notice) => {
      if (notice.kind === "limited") this.#wait(notice.client, notice.waitMs);
    });
  }

  authWait(
    client: string,
    rate: RateLimit,
    credential: Presented,
  ): Awaitable<AuthTry> {
    const waitMs = this.#knownWait(client, rate);
    if (waitMs > 0) return { waitMs };
    if (!this.#local.tracks(client)) return FREE_TRY;
    return this.#judge(client, rate, credential);
  }

  countAuthFailure(client: string, rate: RateLimit): Promise<number> {
    // Counted here at once, before the round trip: this process's next try
    // of the client, even in this same turn, is then judged in Redis.
    const localWait = this.#local.take(client, rate);
    return this.#run(client, rate, undefined).then((answer) =>
      // Redis did not answer: this process's count stands alone.
      answer === undefined
        ? localWait
        : answer[0] === 1
        ? 0
        : Math.max(1, answer[1])
    );
  }

  async #judge(
    client: string,
    rate: RateLimit,
    credential: Presented,
  ): Promise<AuthTry> {
    const answer = await this.#run(client, rate, credential);
    // Redis did not answer: the caller checks, as this process alone would.
    if (answer === undefined) return FREE_TRY;
    const [verdict, waitMs] = answer;
    if (verdict === -1) return { waitMs: Math.max(1, waitMs) };
    if (verdict === 0) this.#local.take(client, rate);
    return { waitMs: 0, verdict: verdict === 1 };
  }

  #wait(client: string, waitMs: number): void {
    if (this.#waiting.size >= MAX_WAITING) {
      this.#waiting.delete(this.#waiting.keys().next().value!);
    }
    this.#waiting.set(client, Date.now() + waitMs);
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
   * Runs `authCheck` for a credential, else `authFailure`: `[verdict or
   * counted, wait]`, or `undefined` when Redis did not answer.
   */
  async #run(
    client: string,
    rate: RateLimit,
    credential: Presented | undefined,
  ): Promise<[number, number] | undefined> {
    const keys = this.#kernel.keys;
    const script = credential === undefined ? "authFailure" : "authCheck";
    let reply: unknown;
    try {
      // `authFailure` takes no credential: callOf sends only what it declares.
      reply = await this.#kernel.script(
        script,
        { ...keys, bucket: keys.authFailures + client },
        {
          client,
          period: String(rate.periodMs),
          burst: String(rate.burst),
          name: credential?.name ?? "",
          digest: credential?.digest ?? "",
        },
      );
    } catch {
      return undefined;
    }
    if (
      !Array.isArray(reply) || reply.length !== 2 ||
      !reply.every((n) => typeof n === "number")
    ) {
      throw new UnexpectedReply(script, reply);
    }
    const [first, waitMs] = reply as [number, number];
    // Refused from memory at once, before the notice to every process comes back.
    if (waitMs > 0) this.#wait(client, waitMs);
    return [first, waitMs];
  }
}
