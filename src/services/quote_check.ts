/**
 * The quote's format check: a capital A–Z first, `.`, `?` or `!` last.
 * @module
 */

import { entryOf, REFUSALS } from "../http/catalogue.ts";
import type { ErrorEntry } from "../http/response.ts";

/** The format errors of a proposed quote, in the contract's order; empty when it passes. */
export function quoteErrors(text: string): ErrorEntry[] {
  const errors: ErrorEntry[] = [];
  const first = text.charCodeAt(0);
  if (!(first >= 0x41 && first <= 0x5a)) {
    errors.push(entryOf(REFUSALS.quoteStart));
  }
  const last = text.at(-1);
  if (last !== "." && last !== "?" && last !== "!") {
    errors.push(entryOf(REFUSALS.quoteEnd));
  }
  return errors;
}

/** The same checks as a JSON Schema: what the OpenAPI document says of a quote. */
export const QUOTE_SCHEMA = {
  type: "string",
  pattern: "^[A-Z][\\s\\S]*[.?!]$",
};
