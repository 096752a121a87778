/**
 * Which names may register: those that survive the token header and show
 * what they are, so a name can authenticate and cannot pass for another.
 * @module
 */

import {
  entryOf,
  MAX_NAME_LENGTH,
  type Refusal,
  REFUSALS,
} from "../http/catalogue.ts";
import type { ErrorEntry } from "../http/response.ts";

// Cannot travel in a header value, or break its line.
const CONTROLS = String.raw`\p{Cc}\u2028\u2029`;
// Show nothing or reorder the text around them; U+2800 shows as a space but is none.
const INVISIBLES = String
  .raw`\p{Cf}\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\u2800`;
const NONCHARACTERS = String.raw`\p{Noncharacter_Code_Point}`;
const CONTROL_OR_BREAK = new RegExp(`[${CONTROLS}]`, "u");
const INVISIBLE = new RegExp(`[${INVISIBLES}]`, "u");
const NONCHARACTER = new RegExp(`[${NONCHARACTERS}]`, "u");
// A mark at the start attaches to whatever is shown before the name.
const LEADING_MARK = /^\p{M}/u;
const EDGE_SPACE = /^\s|\s$/;

export function nameError(description: string): ErrorEntry {
  return { location: "body", name: "name", description };
}

/** `U+XXXX` of the first character of `name` that `pattern` matches. */
function codePointOf(name: string, pattern: RegExp): string {
  const found = pattern.exec(name)?.[0] ?? "";
  const hex = (found.codePointAt(0) ?? 0).toString(16).toUpperCase();
  return `U+${hex.padStart(4, "0")}`;
}

/**
 * Why `name` (in NFC) cannot be registered, or `null`; of several broken
 * rules the most basic is named.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nameProblem } from "./user_name.ts";
 * assert.equal(nameProblem("José"), null);
 * assert.match(nameProblem("a\r\nX-Injected: 1") ?? "", /control characters or line breaks \(U\+000D\)/);
 * assert.match(nameProblem("ad\u200bmin") ?? "", /U\+200B/);
 * ```
 */
export function nameProblem(name: string): string | null {
  if (name.length === 0) return REFUSALS.nameEmpty.description;
  const found = (refusal: Refusal, pattern: RegExp) =>
    entryOf(refusal, { codePoint: codePointOf(name, pattern) }).description;
  if (CONTROL_OR_BREAK.test(name)) {
    return found(REFUSALS.nameControl, CONTROL_OR_BREAK);
  }
  if (name.includes("-")) return REFUSALS.nameDash.description;
  if (INVISIBLE.test(name)) return found(REFUSALS.nameInvisible, INVISIBLE);
  if (LEADING_MARK.test(name)) {
    return found(REFUSALS.nameLeadingMark, LEADING_MARK);
  }
  if (NONCHARACTER.test(name)) {
    return found(REFUSALS.nameNoncharacter, NONCHARACTER);
  }
  if (EDGE_SPACE.test(name)) return REFUSALS.nameEdgeSpace.description;
  let codePoints = 0;
  for (const _ of name) {
    if (++codePoints > MAX_NAME_LENGTH) return REFUSALS.nameTooLong.description;
  }
  return null;
}

const REFUSED = `${CONTROLS}${INVISIBLES}${NONCHARACTERS}-`;

/** The same rules as a JSON Schema, of the name in NFC (`x-normalized`). */
export const NAME_SCHEMA = {
  type: "string",
  "x-normalized": "NFC",
  minLength: 1,
  maxLength: MAX_NAME_LENGTH,
  pattern: `^[^\\s\\p{M}${REFUSED}](?:[^${REFUSED}]*[^\\s${REFUSED}])?$`,
};
