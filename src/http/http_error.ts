/**
 * Errors that know their HTTP answer. A handler throws one anywhere below it
 * and the router answers it; the router needs to know nothing else about
 * the error.
 * @module
 */

import {
  type ErrorEntry,
  errorResponse,
  type FixedStatus,
  statusResponse,
} from "./response.ts";

/**
 * An error carrying its status and the answer it stands for: the contract's
 * envelope when it has entries, else the fixed `{status, message}` body.
 *
 * @example Refusing from deep inside a handler
 * ```ts
 * import { HttpError } from "@lms/light-messaging";
 * const error = new HttpError(413, [
 *   { location: "body", name: "body", description: "Too large" },
 * ]);
 * console.assert(error.getResponse().status === 413);
 * ```
 */
export class HttpError extends Error {
  /** The HTTP status answered. */
  readonly status: number;
  /** The envelope's entries; empty for the fixed-body statuses. */
  readonly errors: readonly ErrorEntry[];
  /** Extra response headers, such as `Retry-After`. */
  readonly headers?: Record<string, string>;

  /** Builds the error; without entries `status` must be one with a fixed body. */
  constructor(
    status: number,
    errors: readonly ErrorEntry[] = [],
    headers?: Record<string, string>,
  ) {
    super(errors.map((e) => e.description).join("; ") || `HTTP ${status}`);
    this.name = "HttpError";
    this.status = status;
    this.errors = errors;
    this.headers = headers;
  }

  /** The answer this error stands for. */
  getResponse(): Response {
    return this.errors.length > 0
      ? errorResponse(this.errors, this.status, this.headers)
      : statusResponse(this.status as FixedStatus, this.headers);
  }
}
