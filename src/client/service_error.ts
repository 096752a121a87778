/**
 * The error a client call fails with when the service answered an error.
 * @module
 */

import type { ErrorEntry } from "../http/response.ts";

function isEnvelope(body: unknown): body is { errors: ErrorEntry[] } {
  return typeof body === "object" && body !== null &&
    Array.isArray((body as { errors?: unknown }).errors);
}

/**
 * A call the service answered with an error status; `errors` is empty for
 * `{status, message}` answers. A call needing a token made without one is
 * 401 `Not registered`; an unreachable service is `fetch`'s `TypeError`.
 *
 * @example Telling a taken name apart
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler } from "@lms/light-messaging";
 * import { MessagingClient, ServiceError } from "@lms/light-messaging/client";
 * await using server = Deno.serve(
 *   { hostname: "127.0.0.1", port: 0, onListen() {} },
 *   createHandler(),
 * );
 * const url = `http://127.0.0.1:${server.addr.port}/`;
 * await new MessagingClient(url).register("alice");
 * let taken = "";
 * try {
 *   await new MessagingClient(url).register("alice");
 * } catch (error) {
 *   if (error instanceof ServiceError && error.status === 400) {
 *     taken = error.errors[0]?.description ?? "";
 *   } else throw error;
 * }
 * assert.equal(taken, "This user exists!");
 * ```
 */
export class ServiceError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The error entries, in the service's order. */
  readonly errors: readonly ErrorEntry[];
  /** The answer's `Retry-After`, in seconds, when it had one. */
  readonly retryAfterSeconds?: number;

  /** Builds the error from an answer's status, parsed body and `Retry-After` header. */
  constructor(status: number, body: unknown, retryAfter?: string | null) {
    const errors = isEnvelope(body) ? body.errors : [];
    const message = errors.length > 0
      ? errors.map((e) => e.description).join("; ")
      : typeof (body as { message?: unknown })?.message === "string"
      ? (body as { message: string }).message
      : `HTTP ${status}`;
    super(message);
    this.name = "ServiceError";
    this.status = status;
    this.errors = errors;
    const seconds = Number(retryAfter ?? NaN);
    if (retryAfter && Number.isSafeInteger(seconds) && seconds >= 0) {
      this.retryAfterSeconds = seconds;
    }
  }
}

/** The error a refusing answer tells of: its JSON body, or its text as the message. */
export async function serviceErrorOf(res: Response): Promise<ServiceError> {
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = { message: text || res.statusText };
  }
  return new ServiceError(res.status, body, res.headers.get("retry-after"));
}
