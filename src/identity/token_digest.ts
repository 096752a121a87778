/**
 * Stores keep a SHA-256 digest, so a Redis dump, `MONITOR` trace or heap snapshot yields no credential.
 * @module
 */

import { createHash } from "node:crypto";

/**
 * Synchronous (`crypto.subtle` is not) and built in: serving loads no npm package.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { tokenDigest } from "./token_digest.ts";
 * assert.equal(
 *   tokenDigest("abc"),
 *   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
 * );
 * ```
 */
export function tokenDigest(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** A token kept in clear by 0.2.0 (40 hex digits), not a digest. */
export function isClearToken(stored: string): boolean {
  return stored.length === 40;
}
