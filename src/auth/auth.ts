/**
 * The `X-Messaging-Token` check, in one place: `<name>-<token>`, split at the
 * first `-`, the name read from the header's bytes as UTF-8 when they are
 * UTF-8 and as ISO-8859-1 otherwise, the token compared in constant time.
 * @module
 */

import { decodeUtf8 } from "../http/body.ts";
import { tokenDigest } from "../identity/token_digest.ts";
import type { Awaitable, UserTokens } from "../store/store.ts";

/** The header that carries the credential. */
export const TOKEN_HEADER = "x-messaging-token";

/** A credential as sent: the name and the token it claims. */
export interface Credential {
  /** The user name, decoded from the header's bytes. */
  name: string;
  /** The 40-hex-digit token. */
  token: string;
  /** The token's digest, once a check has computed it: a request hashes its token once. */
  digest?: string;
}

/**
 * Decodes a header value to text. Header values reach the handler as one
 * character per byte. Bytes that are valid UTF-8 are read as UTF-8 (curl,
 * the client library and the page send names so); any others as ISO-8859-1,
 * the character each byte already is, which is what browsers' `fetch`,
 * Python's `requests` and Node's `fetch` send for a name such as `José`.
 */
function decodeHeader(value: string): string | null {
  let ascii = true;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    // Not a header value: no byte is above 0xFF.
    if (code > 0xff) return null;
    if (code > 0x7f) ascii = false;
  }
  if (ascii) return value;
  return decodeUtf8(Uint8Array.from(value, (c) => c.charCodeAt(0))) ?? value;
}

/**
 * The form a name is stored, answered and compared in: Unicode NFC, so
 * `café` typed precomposed or with a combining accent is one name.
 */
export function normalName(name: string): string {
  return name.normalize("NFC");
}

/** The text before the first `-` and the rest, or `null` without a `-`. */
function split(text: string): [string, string] | null {
  const dash = text.indexOf("-");
  return dash === -1 ? null : [text.slice(0, dash), text.slice(dash + 1)];
}

/**
 * Splits `<name>-<token>`, as `POST /users` answered it, at its first `-`,
 * or answers `null` when it has none; the name in {@linkcode normalName}
 * form. The text is taken as it is: a header value's bytes are decoded by
 * {@linkcode parseCredential}.
 */
export function splitCredential(text: string): Credential | null {
  const parts = split(text);
  return parts && { name: normalName(parts[0]), token: parts[1] };
}

/** Splits a header value into name and token, or `null` when it has no `-` or a character above U+00FF, which no header carries. */
export function parseCredential(header: string | null): Credential | null {
  const parts = header === null ? null : split(header);
  const name = parts && decodeHeader(parts[0]);
  return parts && name !== null
    ? { name: normalName(name), token: parts[1] }
    : null;
}

/**
 * Compares two strings in time that depends only on their lengths, so a
 * caller cannot learn a token a character at a time from response timing.
 */
export function timingSafeEqual(a: string, b: string): boolean {
  const length = Math.max(a.length, b.length);
  let diff = a.length ^ b.length;
  for (let i = 0; i < length; i++) {
    diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  }
  return diff === 0;
}

/** `credential` when `stored` is its token's digest, else `null`; a match is the user's activity. */
function check(
  credential: Credential,
  stored: string | undefined,
  store: UserTokens,
): Credential | null {
  if (stored === undefined) return null;
  credential.digest ??= tokenDigest(credential.token);
  if (!timingSafeEqual(stored, credential.digest)) return null;
  store.touchUser(credential.name);
  return credential;
}

/**
 * The credential of `req` when it names a registered user with that
 * user's token, else `null`. Authenticating is activity: the user's idle
 * time (`--forget-users-after`) starts again.
 */
export function authenticate(
  req: Request,
  store: UserTokens,
): Awaitable<Credential | null> {
  const credential = parseCredential(req.headers.get(TOKEN_HEADER));
  return credential === null ? null : recheck(credential, store);
}

/**
 * `credential` again when it still authenticates, else `null`: a request
 * that waited (for its body, say) checks again before acting, so a user
 * removed meanwhile, or a name that found a new owner, cannot act.
 */
export function recheck(
  credential: Credential,
  store: UserTokens,
): Awaitable<Credential | null> {
  const stored = store.tokenOf(credential.name);
  return stored instanceof Promise
    ? stored.then((token) => check(credential, token, store))
    : check(credential, stored, store);
}
