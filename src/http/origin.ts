/**
 * Whose pages may open a WebSocket: a browser sends `Origin` with every
 * upgrade and lets any page open a socket to any host, so the server must
 * refuse other sites itself, or they could read streams in a user's name.
 * @module
 */

import { lastListValue } from "./client_address.ts";
import { originAllowedBy } from "./cors.ts";

/** Whether a request's `Origin` (when it has one) may open a WebSocket. */
export type OriginCheck = (req: Request) => boolean;

/** Whether `origin` is the site `host` (a `Host` header value) names, on any scheme. */
function sameSite(origin: URL, host: string): boolean {
  try {
    // Read with the origin's scheme, so a default port (`:443` for
    // https) counts as the same whether written or not.
    return new URL(`${origin.protocol}//${host}`).host === origin.host;
  } catch {
    return false;
  }
}

/**
 * A check that lets through requests without `Origin` (not from a browser,
 * which always sends it), those from the service's own origin (the host of
 * the request's `Host`, or with `trustProxy` of `X-Forwarded-Host` as the
 * nearest proxy set it; any scheme, as a page over https may reach the
 * service through a proxy over http), and those from `allowed` (the
 * `--cors-origin` values; `*` allows any).
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
    const forwarded = options.trustProxy
      ? req.headers.get("x-forwarded-host")
      : null;
    return forwarded !== null &&
      sameSite(url, lastListValue(forwarded));
  };
}
