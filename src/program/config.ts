/**
 * The program's options, one row each in {@linkcode OPTIONS}: `main.ts`
 * reads flags, `serve.ts` `LMS_*` variables; `--help` and the docs follow.
 * @module
 */

import { isCorsOrigin } from "../http/cors.ts";
import {
  isRateWithinBounds,
  RATE_LIMIT_BOUNDS,
} from "../operations/rate_limit.ts";
import { SERVICE_LIMITS } from "../services/service_options.ts";
import { isStoreSpec } from "./open_store.ts";
import { redactUrl } from "../store/redis/store_url.ts";
import { FORGET_USERS_AFTER, STORE_LIMITS } from "../store/store.ts";
import type { RateLimit } from "../store/token_buckets.ts";
import { AUTH_FAILURES_DEFAULT } from "../auth/guesses.ts";
import {
  helpText,
  InvalidValue,
  listOption,
  oneOf,
  optionalWhole,
  type OptionTable,
  type OptionValues,
  readOptions,
  switchOption,
  text,
  UsageError,
  valueOption,
  whole,
} from "./options.ts";

export { UsageError } from "./options.ts";

const { burst: BURSTS, periodMs: PERIODS_MS, maxRefillMs } = RATE_LIMIT_BOUNDS;

const RATE_VALUES = `B from ${BURSTS.min} to ${BURSTS.max}, S up to ${
  PERIODS_MS.max / 1000
}, B × S at most ${maxRefillMs / 1000}`;

/** `BURST/SECONDS`, seconds to the millisecond, within the library's bounds. */
function parseRate(raw: string, what: string): RateLimit {
  const match = raw.match(/^(\d{1,10})\/(\d{1,5}(?:\.\d{1,3})?)$/);
  const rate = {
    burst: Number(match?.[1]),
    periodMs: Math.round(Number(match?.[2]) * 1000),
  };
  if (!isRateWithinBounds(rate)) {
    throw new InvalidValue(
      `must be BURST/SECONDS, such as 10/6: BURST ${what} at once (${BURSTS.min} to ${BURSTS.max}), then one every SECONDS (up to ${
        PERIODS_MS.max / 1000
      }), BURST × SECONDS at most ${maxRefillMs / 1000}`,
      raw,
    );
  }
  return rate;
}

/** Every option, in `--help`'s order; `variable.serve`: read by `serve.ts`, `fallback`: by `main.ts` without the flag. */
export const OPTIONS = {
  service: valueOption({
    flag: "service",
    variable: { name: "LMS_SERVICE", serve: true },
    help: "which services to serve",
    ...oneOf("S", ["all", "messaging", "quote"], "all"),
  }),
  port: valueOption({
    flag: "port",
    variable: { name: "PORT", fallback: true },
    help: "port to listen on; 0 picks a free one",
    ...whole({ default: 8000, min: 0, max: 65535 }),
  }),
  hostname: valueOption({
    flag: "hostname",
    help: "address to listen on",
    ...text("H", "0.0.0.0", true),
  }),
  reusePort: switchOption({
    flag: "reuse-port",
    help:
      "share the port with other processes started with it (SO_REUSEPORT, Linux): the kernel spreads connections among them; give them one Redis store",
  }),
  maxBodyBytes: valueOption({
    flag: "max-body-bytes",
    variable: { name: "LMS_MAX_BODY_BYTES", serve: true },
    help: "largest request body read, in bytes; larger is 413",
    ...whole(SERVICE_LIMITS.maxBodyBytes),
  }),
  bodyTimeoutMs: valueOption({
    flag: "body-timeout-ms",
    variable: { name: "LMS_BODY_TIMEOUT_MS", serve: true },
    help: "how long a request body may take to arrive; slower is 408",
    ...whole(SERVICE_LIMITS.bodyTimeoutMs),
  }),
  drainTimeoutMs: valueOption({
    flag: "drain-timeout-ms",
    help:
      "on SIGINT/SIGTERM, how long requests in flight may take before they are cut short and the process exits",
    ...whole({ default: 10_000, min: 0, max: 3_600_000 }),
  }),
  heartbeatMs: valueOption({
    flag: "heartbeat-ms",
    variable: { name: "LMS_HEARTBEAT_MS", serve: true },
    help: "quiet time before an event stream gets a comment line",
    ...whole(SERVICE_LIMITS.heartbeatMs),
  }),
  maxStreams: valueOption({
    flag: "max-streams",
    variable: { name: "LMS_MAX_STREAMS", serve: true },
    help: "event streams open at once; past it 503",
    ...whole(SERVICE_LIMITS.maxStreams),
  }),
  maxStreamsPerClient: valueOption({
    flag: "max-streams-per-client",
    variable: { name: "LMS_MAX_STREAMS_PER_CLIENT", serve: true },
    help: "event streams one client may keep open; past it 429",
    ...whole(SERVICE_LIMITS.maxStreamsPerClient),
  }),
  maxWebSocketsPerClient: valueOption({
    flag: "max-websockets-per-client",
    variable: { name: "LMS_MAX_WEBSOCKETS_PER_CLIENT", serve: true },
    help:
      "how many of a client's streams may be WebSockets (Deno holds each client frame whole, up to 64 MiB); past it 429",
    ...whole(SERVICE_LIMITS.maxWebSocketsPerClient),
  }),
  websocket: valueOption({
    flag: "websocket",
    variable: { name: "LMS_WEBSOCKET", serve: true },
    help:
      "off: the stream routes refuse WebSocket upgrades (400), event streams only",
    ...oneOf("on|off", ["on", "off"], "on"),
  }),
  maxStreamBufferBytes: valueOption({
    flag: "max-stream-buffer-bytes",
    variable: { name: "LMS_MAX_STREAM_BUFFER_BYTES", serve: true },
    help:
      "bytes that may wait for all event-stream readers together, bytes many wait for counted once; past it the readers furthest behind are ended first",
    ...whole(SERVICE_LIMITS.maxStreamBufferBytes),
  }),
  rateLimit: valueOption({
    flag: "rate-limit",
    variable: { name: "LMS_RATE_LIMIT", serve: true },
    help:
      "each client may make B writes at once and one more every S seconds; past it 429 with Retry-After",
    placeholder: "B/S",
    values: RATE_VALUES,
    default: undefined,
    shownDefault: "none",
    parse: (raw) => parseRate(raw, "writes"),
  }),
  authFailures: valueOption({
    flag: "auth-failures",
    variable: { name: "LMS_AUTH_FAILURES", serve: true },
    help:
      "each client may fail to authenticate B times at once and once more every S seconds; past it 429 with Retry-After on authenticated routes",
    // Like --rate-limit, on by default; `0` turns it off.
    placeholder: "B/S|0",
    values: `${RATE_VALUES}; 0: off`,
    default: AUTH_FAILURES_DEFAULT as RateLimit | false,
    shownDefault: `${AUTH_FAILURES_DEFAULT.burst}/${
      AUTH_FAILURES_DEFAULT.periodMs / 1000
    }`,
    parse: (raw) => raw === "0" ? false : parseRate(raw, "failures"),
  }),
  trustProxy: switchOption({
    flag: "trust-proxy",
    variable: { name: "LMS_TRUST_PROXY", serve: true },
    help:
      "the client is the last address of X-Forwarded-For (set only behind a proxy that appends it)",
  }),
  history: valueOption({
    flag: "history",
    variable: { name: "LMS_HISTORY", serve: true },
    help: "messages kept",
    ...whole(STORE_LIMITS.history),
  }),
  maxUsers: valueOption({
    flag: "max-users",
    variable: { name: "LMS_MAX_USERS", serve: true },
    help: "users registered at once; past it 503",
    ...whole(STORE_LIMITS.maxUsers),
  }),
  forgetUsersAfter: valueOption({
    flag: "forget-users-after",
    variable: { name: "LMS_FORGET_USERS_AFTER", serve: true },
    help:
      "unregister a user offline (no authenticated event stream) and without an authenticated request for N seconds, as DELETE /users would",
    ...optionalWhole(FORGET_USERS_AFTER, "never"),
  }),
  store: valueOption({
    flag: "store",
    variable: { name: "LMS_STORE", serve: true, fallback: true },
    help:
      "where state lives; Redis shares it between processes, and through Sentinel follows its failovers",
    placeholder: "S",
    values:
      "memory, redis://HOST:PORT[/DB], or redis+sentinel://H:P[,H:P...]/MASTER[/DB] (the sentinels, and the name they know the master by)",
    default: "memory",
    parse(raw) {
      if (!isStoreSpec(raw)) {
        // Shown without its password, like every URL the program prints.
        throw new InvalidValue(
          "must be memory, a redis:// URL, or redis+sentinel://H:P[,H:P...]/MASTER[/DB]",
          redactUrl(raw),
        );
      }
      return raw;
    },
  }),
  redisPrefix: valueOption({
    flag: "redis-prefix",
    variable: { name: "LMS_REDIS_PREFIX", serve: true },
    help: "prefix of every Redis key",
    ...text("P", "lms:"),
  }),
  redisWaitReplicas: valueOption({
    flag: "redis-wait-replicas",
    variable: { name: "LMS_REDIS_WAIT_REPLICAS", serve: true },
    help:
      "a write is answered only once N Redis replicas hold it (WAIT); until then it waits and new writes are 503",
    ...whole({ default: 0, min: 0, max: 100 }),
  }),
  corsOrigins: listOption({
    flag: "cors-origin",
    variable: { name: "LMS_CORS_ORIGIN", serve: true },
    help: "let pages from origin O call every route",
    placeholder: "O",
    values: "*, or an origin such as https://example.org:8443",
    parse(raw) {
      if (!isCorsOrigin(raw)) {
        throw new InvalidValue(
          "must be * or an origin such as https://example.org:8443, with no path",
          raw,
        );
      }
      return raw;
    },
  }),
  logFormat: valueOption({
    flag: "log-format",
    variable: { name: "LMS_LOG_FORMAT", serve: true },
    help: "the log's format; json is one JSON object per line",
    ...oneOf("F", ["text", "json"], "text"),
  }),
  quiet: switchOption({
    flag: "quiet",
    variable: { name: "LMS_QUIET", serve: true },
    help: "no request log on standard error",
  }),
  help: switchOption({ flag: "help", help: "show this help and exit" }),
} as const satisfies OptionTable;

/** Everything the program is configured with, as {@linkcode OPTIONS} reads it. */
export type Config = OptionValues<typeof OPTIONS>;

/** The `--help` text. */
export const USAGE: string = helpText(
  OPTIONS,
  `Usage: deno task start [flags]

Serves the messaging service (/users, /, /events, and the chat page at
/chat) and the quote service (/quote, /quote/events), with their OpenAPI
description at /openapi.json.`,
);

/** The options of `main.ts`: flags, falling back on `PORT` and `LMS_STORE`. */
export function parseFlags(
  args: string[],
  env: (name: string) => string | undefined,
): Config {
  const config = readOptions(OPTIONS, "start", args, env);
  if (config.reusePort && config.store === "memory") {
    throw new UsageError(
      "--reuse-port needs a shared store: each process on the port would keep its own users and messages. Add --store=redis://HOST:PORT/DB.",
    );
  }
  return config;
}

/** The options of the `deno serve` entry, from `LMS_*` variables. */
export function configFromEnv(
  env: (name: string) => string | undefined,
): Config {
  return readOptions(OPTIONS, "serve", [], env);
}

/** Set by `deno task dev`, whose `--watch` would otherwise wait on after the program ends. */
export const WATCH_VARIABLE = "LMS_WATCH";

/** An environment variable, or `undefined` when unset or not permitted. */
export function readEnv(name: string): string | undefined {
  const state = Deno.permissions.querySync({ name: "env", variable: name });
  return state.state === "granted" ? Deno.env.get(name) : undefined;
}
