/**
 * The request log: one line per request on standard error.
 * @module
 */

import { requestPath } from "./request_path.ts";
import type { Handler } from "./router.ts";

/**
 * Wraps `handler` to log one line per request: the time it was answered
 * (ISO 8601, UTC), method, path, status, milliseconds.
 */
export function withRequestLog(handler: Handler): Handler {
  return async (req) => {
    const start = performance.now();
    const res = await handler(req);
    const ms = (performance.now() - start).toFixed(2);
    // The path only: the query is the client's business, and the token
    // travels in a header, which is never logged.
    console.error(
      `${new Date().toISOString()} ${req.method} ${
        requestPath(req)
      } ${res.status} ${ms}ms`,
    );
    return res;
  };
}
