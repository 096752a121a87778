/**
 * One place that sees every answer and how long it took, for all who want
 * to know (the metrics, the request log): the clock is read twice per
 * request, not twice per observer, and one promise observes the answer.
 * @module
 */

import type { ConnectionInfo, Handler } from "./router.ts";

/**
 * Told of every answered request: the request, its response, the
 * milliseconds from its arrival to its answer (an event stream's: to its
 * headers), and its connection when the server gave one.
 *
 * @example Counting slow answers
 * ```ts
 * import { createHandler, type ResponseObserver } from "@lms/light-messaging";
 * let slow = 0;
 * const onResponse: ResponseObserver = (_req, _res, ms) => {
 *   if (ms > 100) slow++;
 * };
 * createHandler({ onResponse });
 * ```
 */
export type ResponseObserver = (
  req: Request,
  res: Response,
  ms: number,
  info?: ConnectionInfo,
) => void;

/** Wraps `handler` so that `observer` is told of each answer it gives. */
export function observeResponses(
  handler: Handler,
  observer: ResponseObserver,
): Handler {
  return (req, info) => {
    const start = performance.now();
    const res = handler(req, info);
    if (res instanceof Promise) {
      return res.then((answer) => {
        observer(req, answer, performance.now() - start, info);
        return answer;
      });
    }
    observer(req, res, performance.now() - start, info);
    return res;
  };
}
