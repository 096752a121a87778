/**
 * Whose pages may open a WebSocket: browsers let any page open one to any host, so the server
 * refuses other sites, which could otherwise read streams in a user's name.
 * @module
 */

import { lastListValue } from "./client_address.ts";
import { originAllowedBy } from "./cors.ts";

export type OriginCheck = (req: Request) => boolean;

/** On any scheme. */
function sameSite(origin: URL, host: string): boolean {
  try {
    // With the origin's scheme, a default port counts the same written or not.
    return new URL(`${origin.protocol}//${host}`).host === origin.host;
  } catch {
    return false;
  }
}

/**
 * Passes requests without `Origin` (not from a browser), from the service's own host (any scheme:
 * a proxy may change it) and from `allowed` (`*`: any).
 *
 * @example A foreign page is refused
 * ```ts
 * import assert from "node:assert/strict";
 * import { sameOriginOrAllowed } from "./origin.ts";
 * const check = sameOriginOrAllowed(["https://app.example"]);
 * const upgrade = (origin: string) =>
 *   new Request("http://chat.example/events", { headers: { origin } });
 * assert.equal(check(upgrade("https://chat.example")), true);
 * assert.equal(check(upgrade("https://app.example")), true);
 * assert.equal(check(upgrade("https://evil.example")), false);
 * ```
 */
export function sameOriginOrAllowed(
  allowed: readonly string[] = [],
  options: { trustProxy?: boolean } = {},
): OriginCheck {
  const allowedOrigin = originAllowedBy(allowed);
  return (req) => {
    const origin = req.headers.get("origin");
    if (origin === null || allowedOrigin(origin)) return true;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      return false; // "null", from a sandboxed page or a file
    }
    const host = req.headers.get("host") ?? new URL(req.url).host;
    if (sameSite(url, host)) return true;
    const forwarded = options.trustProxy && req.headers.get("x-forwarded-host");
    return !!forwarded && sameSite(url, lastListValue(forwarded));
  };
}
