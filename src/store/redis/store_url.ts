/**
 * The two ways a Redis store is addressed, read without loading the Redis
 * client: `redis://` (or `rediss://`) names one server;
 * `redis+sentinel://HOST:PORT[,HOST:PORT...]/MASTER_NAME[/DB]` names the
 * sentinels that know which server is the master of `MASTER_NAME` now.
 * Neither kind of URL is ever shown with its password.
 * @module
 */

/** A sentinel's address. */
export interface HostPort {
  host: string;
  port: number;
}

/** A master found through Redis Sentinel, as a `redis+sentinel://` URL names it. */
export interface SentinelAddress {
  /** The sentinels to ask, in the order given. */
  sentinels: HostPort[];
  /** The name the sentinels monitor the master under. */
  masterName: string;
  /** The database selected on the master. */
  database: number;
  /** Credentials for the master (and its replicas), not for the sentinels. */
  username?: string;
  password?: string;
}

/** The scheme of a Sentinel URL. */
export const SENTINEL_SCHEME = "redis+sentinel://";

/** The port a sentinel listens on unless a URL says otherwise. */
export const SENTINEL_PORT = 26379;

/** The highest database number a URL may select (Redis's `databases` is 16 by default). */
const MAX_DATABASE = 9999;

function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** `host[:port]` or `[v6]:port`, or `undefined` when it is neither. */
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
 * Reads a `redis+sentinel://[USER[:PASSWORD]@]HOST:PORT[,HOST:PORT...]/MASTER_NAME[/DB]`
 * URL (the port defaults to 26379, the database to 0; the user, the
 * password and the name are percent-decoded); `undefined` when `url` is
 * not one.
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
 * Whether `spec` names a Redis store: a `redis://` or `rediss://` URL, or
 * a `redis+sentinel://` URL that {@linkcode parseSentinelUrl} reads.
 *
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
 * A store URL as it may be shown: its password replaced by `***`. A URL
 * that cannot be read is not shown at all, since where its password is
 * cannot be told.
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
