/**
 * Every answer and its duration, for the metrics and the log: two clock reads per request, not per observer.
 * @module
 */

import type { InFlight } from "./drain.ts";
import type { ConnectionInfo, Handler } from "./router.ts";

/**
 * Told of every answered request; `ms` runs to the answer (an event stream's: to its headers).
 *
 * @example Counting slow answers
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler, type ResponseObserver } from "@lms/light-messaging";
 * const seen: string[] = [];
 * let slow = 0;
 * const onResponse: ResponseObserver = (req, res, ms) => {
 *   seen.push(`${req.method} ${new URL(req.url).pathname} ${res.status}`);
 *   if (ms > 100) slow++;
 * };
 * const handler = createHandler({ onResponse });
 * await handler(new Request("http://localhost/quote"));
 * await handler(new Request("http://localhost/nowhere"));
 * assert.deepEqual(seen, ["GET /quote 200", "GET /nowhere 404"]);
 * assert.ok(slow <= seen.length);
 * ```
 */
export type ResponseObserver = (
  req: Request,
  res: Response,
  ms: number,
  info?: ConnectionInfo,
) => void;

/** `inFlight` is counted in the same step: a step of its own cost every request a promise (post_cpu.md). */
export function observeResponses(
  handler: Handler,
  observer: ResponseObserver,
  inFlight?: InFlight,
): Handler {
  return (req, info) => {
    inFlight?.start();
    const start = performance.now();
    let res;
    try {
      res = handler(req, info);
    } catch (error) {
      inFlight?.end();
      throw error;
    }
    if (res instanceof Promise) {
      return res.then((answer) => {
        inFlight?.end();
        observer(req, answer, performance.now() - start, info);
        return answer;
      }, (error) => {
        inFlight?.end();
        throw error;
      });
    }
    inFlight?.end();
    observer(req, res, performance.now() - start, info);
    return res;
  };
}
