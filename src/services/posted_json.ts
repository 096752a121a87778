/**
 * Parses a posted JSON body so that what is stored is what was posted
 * (`1e400`, `-0`, `1.50`), nested no deeper than every reader can read.
 * @module
 */

export const MAX_JSON_DEPTH = 64;

export type Posted =
  | { ok: true; value: unknown }
  | { ok: false; refusal: "invalid" | "too deep" | "number too long" };

// Deno 2.9 runs both (TC39 "JSON.parse source text access"); TypeScript does not declare them yet.
type Reviver = (
  key: string,
  value: unknown,
  context: { source?: string },
) => unknown;
const json = JSON as unknown as {
  rawJSON(text: string): unknown;
  parse(text: string, reviver?: Reviver): unknown;
};

const keepDigits: Reviver = (_key, value, context) =>
  typeof value === "number" && context.source !== undefined
    ? json.rawJSON(context.source)
    : value;

const QUOTE = 0x22, BACKSLASH = 0x5c, OPEN_ARRAY = 0x5b, OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d, CLOSE_OBJECT = 0x7d;

/** Python's `json` refuses an integer of more than 4,300 digits. */
export const MAX_NUMBER_LENGTH = 1000;

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

interface Survey {
  refusal?: "invalid" | "too deep" | "number too long";
  /** Some number would be re-spelt by a plain `JSON.parse` and `JSON.stringify`. */
  respelt: boolean;
}

/** The code unit `\\uXXXX` at `i` stands for, or -1. */
function escaped(text: string, i: number): number {
  return text.startsWith("\\u", i)
    ? parseInt(text.slice(i + 2, i + 6), 16)
    : -1;
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * One pass: depth, number lengths, whether a plain round trip re-spells a number, and escaped
 * lone surrogates, text no UTF-8 holds and strict readers refuse (I-JSON, RFC 7493).
 */
function survey(text: string): Survey {
  let depth = 0, respelt = false, inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) {
        const code = escaped(text, i);
        if (isHigh(code) && isLow(escaped(text, i + 6))) i += 6;
        else if (isHigh(code) || isLow(code)) {
          return { refusal: "invalid", respelt };
        }
        i++;
      } else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > MAX_JSON_DEPTH) return { refusal: "too deep", respelt };
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = i;
      const number = NUMBER.exec(text)?.[0] ?? "";
      if (number.length > MAX_NUMBER_LENGTH) {
        return { refusal: "number too long", respelt };
      }
      respelt ||= String(Number(number)) !== number;
      i += Math.max(0, number.length - 1);
    }
  }
  return { respelt };
}

/**
 * The value `text` holds, each number as written, or why not (not JSON before too deep).
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
  const { refusal, respelt } = survey(text);
  let value: unknown;
  try {
    value = respelt ? json.parse(text, keepDigits) : JSON.parse(text);
  } catch {
    return { ok: false, refusal: "invalid" };
  }
  return refusal ? { ok: false, refusal } : { ok: true, value };
}
