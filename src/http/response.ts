/**
 * Common bodies are serialized once and kept as strings: a `Response` of bytes costs about three
 * times as much on Deno 2.9 (bench/results/profiles/responses.md).
 * @module
 */

import { markCompressible } from "./compression.ts";
import {
  type ErrorEntry,
  type ErrorLocation,
  type FixedStatus,
  STATUS_MESSAGES,
} from "./catalogue.ts";

export type { ErrorEntry, ErrorLocation, FixedStatus };

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

export function jsonResponse(
  body: string | null,
  status = 200,
  extraHeaders?: Record<string, string>,
): Response {
  const headers = extraHeaders
    ? { "content-type": JSON_CONTENT_TYPE, ...extraHeaders }
    : { "content-type": JSON_CONTENT_TYPE };
  const res = new Response(body, { status, headers });
  return body === null ? res : markCompressible(res, body);
}

export function ok(value: unknown): Response {
  return jsonResponse(JSON.stringify(value));
}

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

const statusBodies = new Map<number, string>();
for (const [code, message] of Object.entries(STATUS_MESSAGES)) {
  statusBodies.set(
    Number(code),
    JSON.stringify({ status: Number(code), message }),
  );
}

export function isFixedStatus(status: number): status is FixedStatus {
  return statusBodies.has(status);
}

export function statusResponse(
  status: FixedStatus,
  extraHeaders?: Record<string, string>,
): Response {
  return jsonResponse(statusBodies.get(status)!, status, extraHeaders);
}
