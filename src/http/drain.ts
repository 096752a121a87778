/**
 * Graceful shutdown: let the requests in flight finish.
 * @module
 */

import type { Handler } from "./router.ts";

/**
 * Counts requests in flight so shutdown can wait for them itself. Deno 2.9's
 * `server.shutdown()` makes the unread body of a request in flight fail
 * (denoland/deno#36809), so the server is shut down only once the handlers
 * are done; meanwhile the handler itself sends new requests elsewhere (see
 * `stopSignal`).
 */
export function drainable(handler: Handler): {
  handler: Handler;
  /** Resolves once no request is in flight, or after `timeoutMs`. */
  drain(timeoutMs: number): Promise<void>;
} {
  let inFlight = 0;
  let idle = () => {};
  const done = () => {
    if (--inFlight === 0) idle();
  };
  const tracked: Handler = (req, info) => {
    inFlight++;
    let res;
    try {
      res = handler(req, info);
    } catch (error) {
      done();
      throw error;
    }
    // Observe the answer rather than wrap it: one promise fewer per request.
    if (res instanceof Promise) res.then(done, done);
    else done();
    return res;
  };
  const drain = (timeoutMs: number) => {
    if (inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  };
  return { handler: tracked, drain };
}
