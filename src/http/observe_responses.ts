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
