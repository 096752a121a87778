/**
 * Errors that know their HTTP answer, thrown anywhere below the router.
 * @module
 */

import { entryOf, type Placeholders, type Refusal } from "./catalogue.ts";
import {
  type ErrorEntry,
  errorResponse,
  type FixedStatus,
  isFixedStatus,
  statusResponse,
} from "./response.ts";

/**
 * An error carrying its answer. A status without a fixed body needs entries: the types refuse
 * `new HttpError(429)` and the constructor throws a `RangeError`.
 *
 * @example Refusing from deep inside a handler
 * ```ts
 * import assert from "node:assert/strict";
 * import { HttpError } from "@lms/light-messaging";
 * const error = new HttpError(413, [
 *   { location: "body", name: "body", description: "Too large" },
 * ]);
 * const res = error.getResponse();
 * assert.equal(res.status, 413);
 * assert.deepEqual(await res.json(), {
 *   status: "error",
 *   errors: [{ location: "body", name: "body", description: "Too large" }],
 * });
 * ```
 *
 * @example A status with a fixed body
 * ```ts
 * import assert from "node:assert/strict";
 * import { HttpError } from "@lms/light-messaging";
 * const res = new HttpError(503, [], { "retry-after": "1" }).getResponse();
 * assert.deepEqual(await res.json(), { status: 503, message: "Service Unavailable" });
 * assert.equal(res.headers.get("retry-after"), "1");
 * ```
 */
export class HttpError extends Error {
  /** The HTTP status answered. */
  readonly status: number;
  /** Empty for the fixed-body statuses. */
  readonly errors: readonly ErrorEntry[];
  /** Extra response headers, such as `Retry-After`. */
  readonly headers: Record<string, string> | undefined;

  /** A fixed-body status, answered with the envelope when it has entries. */
  constructor(
    status: FixedStatus,
    errors?: readonly ErrorEntry[],
    headers?: Record<string, string>,
  );
  /** Any error status (400 to 599), answered with the envelope of `errors`. */
  constructor(
    status: number,
    errors: readonly [ErrorEntry, ...ErrorEntry[]],
    headers?: Record<string, string>,
  );
  constructor(
    status: number,
    errors: readonly ErrorEntry[] = [],
    headers?: Record<string, string>,
  ) {
    if (!(Number.isInteger(status) && status >= 400 && status <= 599)) {
      throw new RangeError(`HttpError: ${status} is not an error status`);
    }
    if (errors.length === 0 && !isFixedStatus(status)) {
      throw new RangeError(
        `HttpError: ${status} has no fixed body, so it needs error entries`,
      );
    }
    super(errors.map((e) => e.description).join("; ") || `HTTP ${status}`);
    this.name = "HttpError";
    this.status = status;
    this.errors = errors;
    this.headers = headers;
  }

  /** The answer this error stands for. */
  getResponse(): Response {
    return this.errors.length === 0 && isFixedStatus(this.status)
      ? statusResponse(this.status, this.headers)
      : errorResponse(this.errors, this.status, this.headers);
  }
}

export function refusalError(
  refusal: Refusal,
  values?: Placeholders,
  headers?: Record<string, string>,
): HttpError {
  return new HttpError(refusal.status, [entryOf(refusal, values)], headers);
}

const seconds = (whole: number) => `${whole} second${whole === 1 ? "" : "s"}`;

/** The 429 of a client past `rate` that must wait `waitMs`, with an honest `Retry-After`. */
export function waitRefusal(
  refusal: Refusal,
  rate: { burst: number; periodMs: number },
  waitMs: number,
): HttpError {
  const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
  return refusalError(refusal, {
    burst: rate.burst,
    period: seconds(rate.periodMs / 1000),
    wait: seconds(retryAfter),
  }, { "retry-after": String(retryAfter) });
}
