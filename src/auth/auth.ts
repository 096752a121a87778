/**
 * `X-Messaging-Token: <name>-<token>`, split at the first `-`; the token compared in constant time.
 * @module
 */

import { decodeUtf8 } from "../http/body.ts";
import { tokenDigest } from "../identity/token_digest.ts";
import type { Awaitable, UserTokens } from "../store/store.ts";

export const TOKEN_HEADER = "x-messaging-token";

export interface Credential {
  name: string;
  token: string;
  /** Computed once per request, by the first check. */
  digest?: string;
}

/** Header bytes as UTF-8 where valid (curl, our clients), else ISO-8859-1 (browsers, `requests`). */
function decodeHeader(value: string): string | null {
  let ascii = true;
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code > 0xff) return null;
    if (code > 0x7f) ascii = false;
  }
  if (ascii) return value;
  return decodeUtf8(Uint8Array.from(value, (c) => c.charCodeAt(0))) ?? value;
}

/** NFC, so `café` precomposed or with a combining accent is one name. */
export function normalName(name: string): string {
  return name.normalize("NFC");
}

/** Splits `<name>-<token>` as text (a WebSocket frame's), or `null` without a `-`. */
export function splitCredential(
  text: string,
  decode: (name: string) => string | null = (name) => name,
): Credential | null {
  const dash = text.indexOf("-");
  const name = dash === -1 ? null : decode(text.slice(0, dash));
  return name === null
    ? null
    : { name: normalName(name), token: text.slice(dash + 1) };
}

/** Splits a header value, or `null` without a `-` or with a character above U+00FF. */
export function parseCredential(header: string | null): Credential | null {
  return header === null ? null : splitCredential(header, decodeHeader);
}

/** Constant time for equal lengths: no token is learnt from timing. */
export function timingSafeEqual(a: string, b: string): boolean {
  const length = Math.max(a.length, b.length);
  let diff = a.length ^ b.length;
  for (let i = 0; i < length; i++) {
    diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  }
  return diff === 0;
}

/** A match is the user's activity. */
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

/** A request that waited (for its body) checks again before acting. */
export function recheck(
  credential: Credential,
  store: UserTokens,
): Awaitable<Credential | null> {
  const stored = store.tokenOf(credential.name);
  return stored instanceof Promise
    ? stored.then((token) => check(credential, token, store))
    : check(credential, stored, store);
}
