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

/** The port defaults to 26379, the database to 0; user, password and name are percent-decoded. */
export function parseSentinelUrl(url: string): SentinelAddress | undefined {
  if (!url.startsWith(SENTINEL_SCHEME)) return undefined;
  const rest = url.slice(SENTINEL_SCHEME.length);
  const slash = rest.indexOf("/");
  if (slash < 0) return undefined;
  const authority = rest.slice(0, slash);
  const path = rest.slice(slash + 1).replace(/\/$/, "").split("/");
  const at = authority.lastIndexOf("@");
  const hosts = authority.slice(at + 1).split(",").map(hostPort);
  if (hosts.some((h) => h === undefined) || path.length > 2) return undefined;
  const [name = "", db = "0"] = path;
  const masterName = decode(name);
  // Redis's `databases` is 16 by default; four digits is room enough.
  if (!masterName || !/^\d{1,4}$/.test(db)) return undefined;
  const address: SentinelAddress = {
    sentinels: hosts as HostPort[],
    masterName,
    database: Number(db),
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

/** A `redis://`, `rediss://` or readable `redis+sentinel://` URL. */
export function isRedisUrl(spec: string): boolean {
  return /^rediss?:\/\/./.test(spec) || parseSentinelUrl(spec) !== undefined;
}

/** A URL with its password as `***`; one that cannot be read is not shown at all. */
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
