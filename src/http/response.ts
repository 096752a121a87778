/**
 * Response builders: every answer of the contract is JSON with one exact
 * content type, so the common bodies are serialized once at start-up and
 * reused for every response. Bodies stay strings: on Deno 2.9 a `Response`
 * of bytes copies them and costs about three times as much to build (see
 * `bench/results/profiles/responses.md`).
 * @module
 */

/**
 * The one content type every JSON response carries.
 *
 * @example Checking an answer
 * ```ts
 * import assert from "node:assert/strict";
 * import { createQuoteService, JSON_CONTENT_TYPE } from "@lms/light-messaging";
 * const res = await createQuoteService()(new Request("http://localhost/quote"));
 * assert.equal(res.headers.get("content-type"), JSON_CONTENT_TYPE);
 * ```
 */
export const JSON_CONTENT_TYPE = "application/json; charset=UTF-8";

/**
 * A location of an error entry: the URL (path and query) or the request body.
 *
 * @example Entries about the body
 * ```ts
 * import assert from "node:assert/strict";
 * import { createMessagingService, type ErrorLocation } from "@lms/light-messaging";
 * const messaging = createMessagingService();
 * const res = await messaging(
 *   new Request("http://localhost/users", { method: "POST", body: "" }),
 * );
 * const { errors } = await res.json();
 * const where: ErrorLocation = errors[0].location;
 * assert.equal(where, "body");
 * ```
 */
export type ErrorLocation = "url" | "body";

/**
 * One validation failure, as the contract's 400 envelope lists it.
 *
 * @example An entry
 * ```ts
 * import assert from "node:assert/strict";
 * import { type ErrorEntry, HttpError } from "@lms/light-messaging";
 * const entry: ErrorEntry = { location: "url", name: "name", description: "This user exists!" };
 * const res = new HttpError(400, [entry]).getResponse();
 * assert.deepEqual(await res.json(), { status: "error", errors: [entry] });
 * ```
 */
export interface ErrorEntry {
  /** Where the offending value was found. */
  location: ErrorLocation;
  /** The offending field. */
  name: string;
  /** A sentence a person can read. */
  description: string;
}

/** Answers `status` with a body that is already JSON text. */
export function jsonResponse(
  body: string | null,
  status = 200,
  extraHeaders?: Record<string, string>,
): Response {
  const headers = extraHeaders
    ? { "content-type": JSON_CONTENT_TYPE, ...extraHeaders }
    : { "content-type": JSON_CONTENT_TYPE };
  return new Response(body, { status, headers });
}

/** Answers 200 with `value` serialized as JSON. */
export function ok(value: unknown): Response {
  return jsonResponse(JSON.stringify(value));
}

/** Answers with the contract's error envelope: `{"status":"error","errors":[...]}`. */
export function errorResponse(
  errors: readonly ErrorEntry[],
  status = 400,
  extraHeaders?: Record<string, string>,
): Response {
  return jsonResponse(
    JSON.stringify({ status: "error", errors }),
    status,
    extraHeaders,
  );
}

/**
 * The statuses answered with a fixed `{status, message}` body.
 *
 * @example An error with no entries
 * ```ts
 * import assert from "node:assert/strict";
 * import { type FixedStatus, HttpError } from "@lms/light-messaging";
 * const status: FixedStatus = 404;
 * const res = new HttpError(status).getResponse();
 * assert.deepEqual(await res.json(), { status: 404, message: "Not Found" });
 * ```
 */
export type FixedStatus = 401 | 403 | 404 | 405 | 500 | 503;

const statusMessages: Record<FixedStatus, string> = {
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  500: "Internal Server Error",
  503: "Service Unavailable",
};
const statusBodies = new Map<number, string>();
for (const [code, message] of Object.entries(statusMessages)) {
  statusBodies.set(
    Number(code),
    JSON.stringify({ status: Number(code), message }),
  );
}

/** Whether `status` is one answered with a fixed `{status, message}` body. */
export function isFixedStatus(status: number): status is FixedStatus {
  return statusBodies.has(status);
}

/** Answers `{"status": N, "message": "..."}` for 401, 403, 404, 405, 500 or 503. */
export function statusResponse(
  status: FixedStatus,
  extraHeaders?: Record<string, string>,
): Response {
  return jsonResponse(statusBodies.get(status)!, status, extraHeaders);
}
