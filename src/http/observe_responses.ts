/**
 * One place that sees every answer and how long it took, for all who want
 * to know (the metrics, the request log): the clock is read twice per
 * request, not twice per observer, and one promise observes the answer.
 * @module
 */

import type { InFlight } from "./drain.ts";
import type { ConnectionInfo, Handler } from "./router.ts";

/**
 * Told of every answered request: the request, its response, the
 * milliseconds from its arrival to its answer (an event stream's: to its
 * headers), and its connection when the server gave one.
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

/**
 * Wraps `handler` so that `observer` is told of each answer it gives, and
 * `inFlight`, when given, counts each request until its answer (or its
 * failure) in the same step.
 */
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
