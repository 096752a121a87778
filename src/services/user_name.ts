/**
 * Which names may register: only those that come back intact in the
 * `X-Messaging-Token` header and that show what they are, so a name that
 * registers can authenticate and cannot pass for another.
 * @module
 */

import {
  entryOf,
  MAX_NAME_LENGTH,
  type Refusal,
  REFUSALS,
} from "../http/catalogue.ts";
import type { ErrorEntry } from "../http/response.ts";

export { MAX_NAME_LENGTH };

// C0, DEL and C1 (General_Category Cc) cannot travel in a header value or
// break its line; neither may the line and paragraph separators.
const CONTROLS = String.raw`\p{Cc}\u2028\u2029`;
// Characters that show nothing or reorder the text around them: format
// characters (Cf), default-ignorables, bidirectional controls, and the
// blank Braille pattern, which shows as a space but is none.
const INVISIBLES = String
  .raw`\p{Cf}\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\u2800`;
const NONCHARACTERS = String.raw`\p{Noncharacter_Code_Point}`;
const CONTROL_OR_BREAK = new RegExp(`[${CONTROLS}]`, "u");
const INVISIBLE = new RegExp(`[${INVISIBLES}]`, "u");
const NONCHARACTER = new RegExp(`[${NONCHARACTERS}]`, "u");
// A mark at the start attaches to whatever is shown before the name.
const LEADING_MARK = /^\p{M}/u;
const EDGE_SPACE = /^\s|\s$/;

/** An error entry about the name in a registration body. */
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
 * Why `name` (in NFC, as `normalName` makes it) cannot be registered, or
 * `null` when it can. When it breaks several rules, the most basic one is
 * named: a control character or line break before a `-`.
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

/** Every character a name may not hold anywhere, for the schema. */
const REFUSED = `${CONTROLS}${INVISIBLES}${NONCHARACTERS}-`;

/**
 * The same rules as a JSON Schema: what the OpenAPI document says of a
 * name. They hold of the name in NFC (`x-normalized`), which may differ in
 * length from the text sent.
 */
export const NAME_SCHEMA = {
  type: "string",
  "x-normalized": "NFC",
  minLength: 1,
  maxLength: MAX_NAME_LENGTH,
  pattern: `^[^\\s\\p{M}${REFUSED}](?:[^${REFUSED}]*[^\\s${REFUSED}])?$`,
};
