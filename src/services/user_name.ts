/**
 * Which names may register: only those that come back intact in the
 * `X-Messaging-Token` header, so a name that registers can authenticate.
 * @module
 */

import type { ErrorEntry } from "../http/response.ts";

/** The longest name accepted, in Unicode code points. */
export const MAX_NAME_LENGTH = 64;

// U+0000–U+001F and U+007F cannot travel in an HTTP header value.
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const EDGE_SPACE = /^\s|\s$/;

/** An error entry about the name in a registration body. */
export function nameError(description: string): ErrorEntry {
  return { location: "body", name: "name", description };
}

/**
 * Why `name` cannot be registered, or `null` when it can. Every refused name
 * is one that could not come back intact in the `X-Messaging-Token` header.
 */
export function nameProblem(name: string): string | null {
  if (name.length === 0) return "Name must not be empty";
  if (name.includes("-")) {
    return "Name must not contain '-': the token header is split at its first '-'";
  }
  if (CONTROL.test(name)) return "Name must not contain control characters";
  if (EDGE_SPACE.test(name)) {
    return "Name must not start or end with white space";
  }
  let codePoints = 0;
  for (const _ of name) {
    if (++codePoints > MAX_NAME_LENGTH) {
      return `Name must be at most ${MAX_NAME_LENGTH} characters`;
    }
  }
  return null;
}
