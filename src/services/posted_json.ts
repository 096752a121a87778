/**
 * Parses a posted JSON body so that what is stored is what was posted: every
 * number keeps its digits (`1e400`, `-0`, `1.50`), and nesting is bounded so
 * every reader's parser can read it back.
 * @module
 */

/** The deepest nesting of arrays and objects a posted body may have. */
export const MAX_JSON_DEPTH = 64;

/** A parsed body, or why it was refused. */
export type Posted =
  | { ok: true; value: unknown }
  | { ok: false; refusal: "invalid" | "too deep" };

// Deno 2.9 runs both (TC39 "JSON.parse source text access"); TypeScript's
// lib does not declare them yet.
const json = JSON as unknown as {
  rawJSON(text: string): unknown;
  parse(
    text: string,
    reviver?: (
      key: string,
      value: unknown,
      context: { source?: string },
    ) => unknown,
  ): unknown;
};

const keepDigits = (
  _key: string,
  value: unknown,
  context: { source?: string },
) =>
  typeof value === "number" && context.source !== undefined
    ? json.rawJSON(context.source)
    : value;

const QUOTE = 0x22, BACKSLASH = 0x5c, OPEN_ARRAY = 0x5b, OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d, CLOSE_OBJECT = 0x7d;

/**
 * One pass over the text outside its strings: how deep it nests, and whether
 * a number in it would be re-spelt by a plain `JSON.parse` and
 * `JSON.stringify`. Most bodies hold no such number, and skip the reviver.
 */
function survey(text: string): { tooDeep: boolean; respelt: boolean } {
  let depth = 0, respelt = false, inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > MAX_JSON_DEPTH) return { tooDeep: true, respelt };
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
    else if (!respelt && (c === 0x2d || (c >= 0x30 && c <= 0x39))) {
      const number =
        /^-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i, i + 400))?.[0] ??
          "";
      respelt = number.length === 400 || String(Number(number)) !== number;
      i += Math.max(0, number.length - 1);
    }
  }
  return { tooDeep: false, respelt };
}

/**
 * The value `text` holds, with each number kept as written (as a raw JSON
 * value that `JSON.stringify` writes back digit for digit), or why not. Not
 * JSON comes before too deep, as the contract's first check is for JSON.
 *
 * @example Numbers come back as they were posted
 * ```ts
 * import assert from "node:assert/strict";
 * import { parsePosted } from "./posted_json.ts";
 * const posted = parsePosted('{"n":1e400,"m":-0,"p":1.50,"q":7}');
 * assert.ok(posted.ok);
 * assert.equal(JSON.stringify(posted.value), '{"n":1e400,"m":-0,"p":1.50,"q":7}');
 * const deep = "[".repeat(65) + "]".repeat(65);
 * assert.deepEqual(parsePosted(deep), { ok: false, refusal: "too deep" });
 * assert.deepEqual(parsePosted("{"), { ok: false, refusal: "invalid" });
 * ```
 */
export function parsePosted(text: string): Posted {
  const { tooDeep, respelt } = survey(text);
  let value: unknown;
  try {
    value = respelt ? json.parse(text, keepDigits) : JSON.parse(text);
  } catch {
    return { ok: false, refusal: "invalid" };
  }
  return tooDeep ? { ok: false, refusal: "too deep" } : { ok: true, value };
}
