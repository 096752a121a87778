/**
 * Graceful shutdown: let the requests in flight finish.
 * @module
 */

/**
 * Counts requests in flight: Deno 2.9's `server.shutdown()` fails unread bodies
 * (denoland/deno#36809), so shutdown waits for the handlers first.
 *
 * @example Waiting for the requests in flight
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler, InFlight } from "@lms/light-messaging";
 * const inFlight = new InFlight();
 * const handler = createHandler({ inFlight });
 * const res = await handler(new Request("http://localhost/quote"));
 * assert.equal(res.status, 200);
 * // Once the answer is back nothing is in flight: drain resolves at once,
 * // before a callback queued after it, not after 60 s.
 * const first = await Promise.race([
 *   inFlight.drain(60_000).then(() => "drained"),
 *   Promise.resolve().then(() => "still waiting"),
 * ]);
 * assert.equal(first, "drained");
 * ```
 */
export class InFlight {
  #count = 0;
  #idle = () => {};

  /** A request has arrived. */
  start(): void {
    this.#count++;
  }

  /** A request that `start` counted has its answer (or failed). */
  end(): void {
    if (--this.#count === 0) this.#idle();
  }

  /** Resolves once no request is in flight, or after `timeoutMs`. */
  drain(timeoutMs: number): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.#idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
