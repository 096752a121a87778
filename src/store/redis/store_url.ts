/**
 * Reads `redis://` and `redis+sentinel://` URLs without loading the Redis client; a password is never shown.
 * @module
 */

export interface HostPort {
  host: string;
  port: number;
}

export interface SentinelAddress {
  sentinels: HostPort[];
  masterName: string;
  database: number;
  /** For the master (and its replicas), not for the sentinels. */
  username?: string;
  password?: string;
}

export const SENTINEL_SCHEME = "redis+sentinel://";

export const SENTINEL_PORT = 26379;

/** Redis's `databases` is 16 by default. */
const MAX_DATABASE = 9999;

function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** `host[:port]` or `[v6]:port`. */
function hostPort(text: string): HostPort | undefined {
  const match = text.match(
    /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9][A-Za-z0-9.-]*))(?::(\d{1,5}))?$/,
  );
  if (!match) return undefined;
  const [, v6, name, portText] = match;
  const host = v6 ?? name;
  if (host === undefined) return undefined;
  const port = portText === undefined ? SENTINEL_PORT : Number(portText);
  if (port < 1 || port > 65535) return undefined;
  return { host, port };
}

/**
 * The port defaults to 26379, the database to 0; user, password and name are percent-decoded.
 *
 * @example Three sentinels
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseSentinelUrl } from "./store_url.ts";
 * const address = parseSentinelUrl("redis+sentinel://10.0.0.1:26379,10.0.0.2:26379,10.0.0.3/cache/2");
 * assert.equal(address?.sentinels.length, 3);
 * assert.deepEqual(address?.sentinels[2], { host: "10.0.0.3", port: 26379 });
 * assert.equal(address?.masterName, "cache");
 * assert.equal(address?.database, 2);
 * ```
 */
export function parseSentinelUrl(url: string): SentinelAddress | undefined {
  if (!url.startsWith(SENTINEL_SCHEME)) return undefined;
  const rest = url.slice(SENTINEL_SCHEME.length);
  const slash = rest.indexOf("/");
  if (slash < 0) return undefined;
  const authority = rest.slice(0, slash);
  const path = rest.slice(slash + 1).replace(/\/$/, "").split("/");
  const at = authority.lastIndexOf("@");
  const hosts = authority.slice(at + 1).split(",").map(hostPort);
  if (hosts.length === 0 || hosts.some((h) => h === undefined)) {
    return undefined;
  }
  if (path.length > 2) return undefined;
  const [name = "", db] = path;
  const masterName = decode(name);
  if (!masterName) return undefined;
  const database = db === undefined
    ? 0
    : /^\d{1,4}$/.test(db)
    ? Number(db)
    : NaN;
  if (!(database <= MAX_DATABASE)) return undefined;
  const address: SentinelAddress = {
    sentinels: hosts as HostPort[],
    masterName,
    database,
  };
  if (at >= 0) {
    const userInfo = authority.slice(0, at);
    const colon = userInfo.indexOf(":");
    const username = decode(colon < 0 ? userInfo : userInfo.slice(0, colon));
    const password = colon < 0 ? "" : decode(userInfo.slice(colon + 1));
    if (username === undefined || password === undefined) return undefined;
    if (username !== "") address.username = username;
    if (password !== "") address.password = password;
  }
  return address;
}

/**
 * @example Telling a store URL from anything else
 * ```ts
 * import assert from "node:assert/strict";
 * import { isRedisUrl } from "./store_url.ts";
 * assert.ok(isRedisUrl("redis://127.0.0.1:6379/0"));
 * assert.ok(isRedisUrl("redis+sentinel://127.0.0.1:26379/mymaster"));
 * assert.ok(!isRedisUrl("redis+sentinel://127.0.0.1:26379"), "no master name");
 * ```
 */
export function isRedisUrl(spec: string): boolean {
  return /^rediss?:\/\/./.test(spec) || parseSentinelUrl(spec) !== undefined;
}

/**
 * A URL that cannot be read is not shown at all: where its password is cannot be told.
 *
 * @example Showing a URL in a message
 * ```ts
 * import assert from "node:assert/strict";
 * import { redactUrl } from "./store_url.ts";
 * assert.equal(
 *   redactUrl("redis://app:s3cret@10.0.0.1:6379/0"),
 *   "redis://app:***@10.0.0.1:6379/0",
 * );
 * assert.equal(
 *   redactUrl("redis+sentinel://:s3cret@10.0.0.1,10.0.0.2/cache"),
 *   "redis+sentinel://:***@10.0.0.1,10.0.0.2/cache",
 * );
 * ```
 */
export function redactUrl(url: string): string {
  if (url.startsWith(SENTINEL_SCHEME)) {
    const rest = url.slice(SENTINEL_SCHEME.length);
    const slash = rest.indexOf("/");
    const authority = slash < 0 ? rest : rest.slice(0, slash);
    const at = authority.lastIndexOf("@");
    const colon = authority.indexOf(":");
    if (at < 0 || colon < 0 || colon > at) return url;
    return `${SENTINEL_SCHEME}${authority.slice(0, colon)}:***${
      rest.slice(at)
    }`;
  }
  try {
    const parsed = new URL(url);
    if (parsed.password === "") return url;
    parsed.password = "***";
    return parsed.href;
  } catch {
    return "(an unparsable URL)";
  }
}
