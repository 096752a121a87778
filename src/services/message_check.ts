/**
 * The contract's checks of a posted message, in their order.
 * @module
 */

import { entryOf, type Refusal, REFUSALS } from "../http/catalogue.ts";
import type { ErrorEntry } from "../http/response.ts";
import { MAX_NUMBER_LENGTH, parsePosted } from "./posted_json.ts";

const POSTED_REFUSALS = {
  invalid: entryOf(REFUSALS.notJson),
  "too deep": entryOf(REFUSALS.nestedTooDeeply),
  "number too long": entryOf(REFUSALS.numberTooLong, {
    limit: MAX_NUMBER_LENGTH,
  }),
} as const;

/** The message to store, or the entries refusing it. */
export type Check =
  | { ok: true; message: Record<string, unknown> }
  | { ok: false; errors: ErrorEntry[] };

function bodyError(refusal: Refusal): Check {
  return { ok: false, errors: [entryOf(refusal)] };
}

/** The contract's message checks in order; on success, the message with `color` and `user` set. */
export function checkMessage(body: string | null, user: string): Check {
  const posted = body === null
    ? { ok: false as const, refusal: "invalid" as const }
    : parsePosted(body);
  if (!posted.ok) {
    return { ok: false, errors: [POSTED_REFUSALS[posted.refusal]] };
  }
  const parsed = posted.value;
  if (
    typeof parsed !== "object" || parsed === null || Array.isArray(parsed) ||
    !Object.hasOwn(parsed, "text")
  ) {
    return bodyError(REFUSALS.missingText);
  }
  // JSON.parse makes every key, `__proto__` included, an own data property.
  const message = parsed as Record<string, unknown>;
  if (typeof message.text !== "string") {
    return bodyError(REFUSALS.textNotString);
  }
  if (!Object.hasOwn(message, "color")) {
    message.color = "black";
  } else if (message.color !== "red" && message.color !== "black") {
    return bodyError(REFUSALS.badColor);
  }
  message.user = user;
  return { ok: true, message };
}

/** The same checks as a JSON Schema, for the OpenAPI document. */
export const NEW_MESSAGE_SCHEMA = {
  type: "object",
  required: ["text"],
  properties: {
    text: { type: "string" },
    color: { enum: ["red", "black"], default: "black" },
  },
  additionalProperties: true,
};
