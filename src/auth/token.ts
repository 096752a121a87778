/**
 * Tokens: 20 random bytes as 40 lowercase hex digits.
 * @module
 */

const TOKEN_BYTES = 20;
// Random bytes are drawn from the system in batches and each byte is used
// for one token only: one call per 512 registrations instead of one each.
let randomPool = new Uint8Array(0);
let randomOffset = 0;

/** A fresh token, from `crypto.getRandomValues`. */
export function newToken(): string {
  if (randomOffset + TOKEN_BYTES > randomPool.length) {
    randomPool = crypto.getRandomValues(new Uint8Array(TOKEN_BYTES * 512));
    randomOffset = 0;
  }
  const bytes = randomPool.subarray(randomOffset, randomOffset + TOKEN_BYTES);
  randomOffset += TOKEN_BYTES;
  return bytes.toHex();
}
