/**
 * The contract's checks of a posted message, in their order.
 * @module
 */

import type { ErrorEntry } from "../http/response.ts";
import { MAX_NUMBER_LENGTH, parsePosted } from "./posted_json.ts";

const POSTED_REFUSALS = {
  invalid: "Not valid JSON",
  "too deep": "Nested too deeply",
  "number too long":
    `Number too long (at most ${MAX_NUMBER_LENGTH} characters)`,
} as const;

/** The outcome of {@linkcode checkMessage}: the message to store, or the entries refusing it. */
export type Check =
  | { ok: true; message: Record<string, unknown> }
  | { ok: false; errors: ErrorEntry[] };

function bodyError(name: string, description: string): Check {
  return { ok: false, errors: [{ location: "body", name, description }] };
}

/**
 * Runs the contract's message checks in order on a posted body and, when
 * they pass, returns the message to store with `color` and `user` set.
 */
export function checkMessage(body: string | null, user: string): Check {
  const posted = body === null
    ? { ok: false as const, refusal: "invalid" as const }
    : parsePosted(body);
  if (!posted.ok) {
    return bodyError("message", POSTED_REFUSALS[posted.refusal]);
  }
  const parsed = posted.value;
  if (
    typeof parsed !== "object" || parsed === null || Array.isArray(parsed) ||
    !Object.hasOwn(parsed, "text")
  ) {
    return bodyError("text", "Missing text");
  }
  // JSON.parse defines every key as an own data property, `__proto__`
  // included, so the posted fields are kept as posted.
  const message = parsed as Record<string, unknown>;
  if (typeof message.text !== "string") {
    return bodyError("text", "text must be a string");
  }
  if (!Object.hasOwn(message, "color")) {
    message.color = "black";
  } else if (message.color !== "red" && message.color !== "black") {
    return bodyError("color", "only red and black supported");
  }
  message.user = user;
  return { ok: true, message };
}
