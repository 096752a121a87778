/**
 * CORS for the allowed origins; other requests pass through untouched.
 * @module
 */

import { requestPath } from "./request_path.ts";
import { allowedMethods, type Handler, type Routes } from "./router.ts";

const ALLOWED_HEADERS = "X-Messaging-Token, Content-Type";
/** The response headers a page may read beyond the simple ones. */
const EXPOSED_HEADERS = "Allow, Retry-After";
const PREFLIGHT_MAX_AGE = "600";

/** `*`, or an origin exactly as browsers send it (no path). */
export function isCorsOrigin(value: string): boolean {
  if (value === "*") return true;
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") &&
      url.origin === value;
  } catch {
    return false;
  }
}

export function originAllowedBy(
  origins: readonly string[],
): (origin: string) => boolean {
  if (origins.includes("*")) return () => true;
  const allowed = new Set(origins);
  return (origin) => allowed.has(origin);
}

/** Preflights answer 204 with the route's methods; with no origins, `handler` itself. */
export function withCors(
  handler: Handler,
  routes: Routes,
  origins: readonly string[],
): Handler {
  if (origins.length === 0) return handler;
  const anyOrigin = origins.includes("*");
  const allowed = originAllowedBy(origins);
  const methodsOf = new Map(
    Object.entries(routes).map(([path, methods]) => [
      path,
      allowedMethods(methods),
    ]),
  );
  const decorate = (res: Response, allowOrigin: string) => {
    res.headers.set("access-control-allow-origin", allowOrigin);
    res.headers.set("access-control-expose-headers", EXPOSED_HEADERS);
    res.headers.append("vary", "Origin");
    return res;
  };
  return (req, info) => {
    const origin = req.headers.get("origin");
    if (origin === null || !allowed(origin)) {
      return handler(req, info);
    }
    const allowOrigin = anyOrigin ? "*" : origin;
    if (req.method === "OPTIONS") {
      const methods = methodsOf.get(requestPath(req));
      if (methods !== undefined) {
        return new Response(null, {
          status: 204,
          headers: {
            "access-control-allow-origin": allowOrigin,
            "access-control-allow-methods": methods,
            "access-control-allow-headers": ALLOWED_HEADERS,
            "access-control-max-age": PREFLIGHT_MAX_AGE,
            "vary": "Origin",
          },
        });
      }
    }
    const res = handler(req, info);
    return res instanceof Promise
      ? res.then((r) => decorate(r, allowOrigin))
      : decorate(res, allowOrigin);
  };
}
