/**
 * Who a client is, for rate limits, stream limits and the log.
 * @module
 */

import { isIP } from "node:net";
import type { ConnectionInfo } from "./router.ts";

/**
 * Finds the client address of a request.
 *
 * @example Clients known by a header that a trusted gateway sets
 * ```ts
 * import assert from "node:assert/strict";
 * import { type ClientAddressOf, createHandler } from "@lms/light-messaging";
 * const clientOf: ClientAddressOf = (req) => req.headers.get("x-user-id") ?? "anonymous";
 * const handler = createHandler({ clientOf, rateLimit: { burst: 1, periodMs: 60_000 } });
 * const post = (user: string, body: string) =>
 *   handler(new Request("http://localhost/quote", {
 *     method: "POST",
 *     headers: { "x-user-id": user },
 *     body,
 *   }));
 * assert.equal((await post("ann", "One.")).status, 200);
 * assert.equal((await post("ann", "Two.")).status, 429);
 * assert.equal((await post("bob", "Three.")).status, 200);
 * ```
 */
export type ClientAddressOf = (req: Request, info?: ConnectionInfo) => string;

/** For a request with no connection information (called directly, not served). */
export const UNKNOWN_CLIENT = "unknown";

/** A longer `X-Forwarded-For` value is not an address and must not become a key. */
const MAX_ADDRESS_LENGTH = 64;

/** The one the nearest proxy appended. */
export function lastListValue(header: string): string {
  return header.slice(header.lastIndexOf(",") + 1).trim();
}

/**
 * The connection's address; with `trustProxy`, the last `X-Forwarded-For` address, the only
 * one a client cannot forge.
 *
 * @example Behind a proxy
 * ```ts
 * import assert from "node:assert/strict";
 * import { clientAddressOf } from "@lms/light-messaging";
 * const clientOf = clientAddressOf({ trustProxy: true });
 * const req = new Request("http://localhost/", {
 *   headers: { "x-forwarded-for": "203.0.113.9, 198.51.100.4" },
 * });
 * const remoteAddr: Deno.NetAddr = { transport: "tcp", hostname: "10.0.0.2", port: 50000 };
 * assert.equal(clientOf(req, { remoteAddr }), "198.51.100.4");
 * assert.equal(clientAddressOf()(req, { remoteAddr }), "10.0.0.2");
 * ```
 */
export function clientAddressOf(
  options: { trustProxy?: boolean } = {},
): ClientAddressOf {
  const direct: ClientAddressOf = (_req, info) =>
    info !== undefined && "hostname" in info.remoteAddr
      ? info.remoteAddr.hostname
      : UNKNOWN_CLIENT;
  const read: ClientAddressOf = !options.trustProxy ? direct : (req, info) => {
    const header = req.headers.get("x-forwarded-for");
    if (header === null) return direct(req, info);
    const last = lastListValue(header);
    const address = last.length <= MAX_ADDRESS_LENGTH
      ? canonicalAddress(last)
      : undefined;
    return address ?? direct(req, info);
  };
  // Once Deno upgrades a request to a WebSocket its headers and address throw; the log asks last.
  const known = new WeakMap<Request, string>();
  return (req, info) => {
    let client = known.get(req);
    if (client === undefined) known.set(req, client = read(req, info));
    return client;
  };
}

/** One spelling per address (`2001:DB8::1` is `2001:db8::1`), or `undefined` when it is none. */
function canonicalAddress(text: string): string | undefined {
  // Some proxies add the port: `1.2.3.4:56`, `[2001:db8::1]:56`.
  const [, host = text] = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text) ??
    /^(\d+\.\d+\.\d+\.\d+):\d{1,5}$/.exec(text) ?? [];
  if (isIP(host) === 4) return host;
  const bare = host.replace(/%[^%]*$/, "");
  if (isIP(bare) !== 6) return undefined;
  const canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  // IPv4-mapped: the URL parser spells its last 32 bits as two hex groups.
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (mapped === null) return canonical;
  const [high, low] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}
