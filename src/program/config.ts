/**
 * The program's options, parsed in one place: from flags for `main.ts`, from
 * `LMS_*` environment variables for the `deno serve` entry.
 * @module
 */

import { parseArgs } from "node:util";
import type { ServiceSelection } from "../services/service_names.ts";
import { isStoreSpec } from "../store/open_store.ts";
import { SERVICE_LIMITS } from "../services/service_options.ts";
import { isWithin, type WholeRange } from "../store/whole_range.ts";
import {
  isRateWithinBounds,
  RATE_LIMIT_BOUNDS,
} from "../operations/rate_limit.ts";
import type { RateLimit } from "../store/token_buckets.ts";
import type { LogFormat } from "../http/request_log.ts";
import { clientAddressOf } from "../http/client_address.ts";
import type { HandlerOptions } from "../services/app.ts";
import type { Store } from "../store/store.ts";
import { requestPath } from "../http/request_path.ts";
import type { ProgramLog } from "./program_log.ts";

import { STORE_LIMITS } from "../store/store.ts";
import { isCorsOrigin } from "../http/cors.ts";

/** How long shutdown waits for requests in flight, by default. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 10_000;
const DRAIN_TIMEOUTS = { min: 0, max: 3_600_000 };
const PORTS = { min: 0, max: 65535 };

/** The `--help` text. */
export const USAGE = `Usage: deno task start [flags]

Serves the messaging service (/users, /, /events, and the chat page at
/chat) and the quote service (/quote, /quote/events), with their OpenAPI
description at /openapi.json.

Flags:
  --service=all|messaging|quote  which services to serve (default: all)
  --port=N            port to listen on; 0 picks a free one (default: $PORT, else 8000)
  --hostname=H        address to listen on (default: 0.0.0.0)
  --max-body-bytes=N  largest request body read, in bytes (default: ${SERVICE_LIMITS.maxBodyBytes.default})
  --body-timeout-ms=N how long a request body may take to arrive; slower is 408
                      (default: ${SERVICE_LIMITS.bodyTimeoutMs.default})
  --drain-timeout-ms=N on SIGINT/SIGTERM, how long requests in flight may take
                      before they are cut short and the process exits (default: ${DEFAULT_DRAIN_TIMEOUT_MS})
  --heartbeat-ms=N    quiet time before an event stream gets a comment line
                      (default: ${SERVICE_LIMITS.heartbeatMs.default})
  --max-streams=N     event streams open at once; past it 503 (default: ${SERVICE_LIMITS.maxStreams.default})
  --max-streams-per-client=N
                      event streams one client may keep open; past it 429
                      (default: ${SERVICE_LIMITS.maxStreamsPerClient.default})
  --rate-limit=B/S    each client may make B writes at once and one more every
                      S seconds; past it 429 with Retry-After (default: none)
  --trust-proxy       the client is the last address of X-Forwarded-For (set
                      only behind a proxy that appends it)
  --history=N         messages kept, at least 5 (default: ${STORE_LIMITS.history.default})
  --max-users=N       users registered at once (default: ${STORE_LIMITS.maxUsers.default})
  --store=S           memory, or redis://HOST:PORT[/DB] to share state between
                      processes (default: $LMS_STORE, else memory)
  --redis-prefix=P    prefix of every Redis key (default: lms:)
  --cors-origin=O     let pages from origin O (https://host[:port]) call every
                      route; repeatable; * for any origin (default: none)
  --log-format=F      text or json: one JSON object per line (default: text)
  --quiet             no request log on standard error
  --help              show this help and exit
`;

/** Everything the program is configured with. */
export interface Config {
  service: ServiceSelection;
  port: number;
  hostname: string;
  maxBodyBytes: number;
  bodyTimeoutMs: number;
  drainTimeoutMs: number;
  heartbeatMs: number;
  maxStreams: number;
  maxStreamsPerClient: number;
  /** Each client's write allowance, if limited. */
  rateLimit: RateLimit | undefined;
  trustProxy: boolean;
  logFormat: LogFormat;
  history: number;
  maxUsers: number;
  store: string;
  redisPrefix: string;
  corsOrigins: string[];
  quiet: boolean;
  help: boolean;
}

/** A flag or value the program cannot start with; exits 2. */
export class UsageError extends Error {}

function wholeNumber(
  flag: string,
  raw: string,
  range: WholeRange,
): number {
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!isWithin(range, value)) {
    throw new UsageError(
      `${flag} must be a whole number from ${range.min} to ${range.max} (got "${raw}")`,
    );
  }
  return value;
}

/** `BURST/SECONDS` as a rate, seconds to the millisecond. */
function rateLimit(flag: string, raw: string): RateLimit {
  const match = raw.match(/^(\d{1,10})\/(\d{1,5}(?:\.\d{1,3})?)$/);
  const burst = Number(match?.[1]);
  const periodMs = Math.round(Number(match?.[2]) * 1000);
  if (!isRateWithinBounds({ burst, periodMs })) {
    const bounds = RATE_LIMIT_BOUNDS;
    throw new UsageError(
      `${flag} must be BURST/SECONDS, such as 10/6: BURST writes at once (${bounds.burst.min} to ${bounds.burst.max}), then one every SECONDS (up to ${
        bounds.periodMs.max / 1000
      }), BURST × SECONDS at most ${bounds.maxRefillMs / 1000} (got "${raw}")`,
    );
  }
  return { burst, periodMs };
}

/** How a flag is named in error messages: as typed, `--name`. */
const flagName = (flag: string) => `--${flag}`;

/**
 * Parses flags, with `PORT` and `LMS_STORE` from `env` as fallbacks; throws
 * {@linkcode UsageError}, naming each option by `nameOf`.
 */
export function parseFlags(
  args: string[],
  env: (name: string) => string | undefined,
  nameOf: (flag: string) => string = flagName,
): Config {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        service: { type: "string", default: "all" },
        port: { type: "string" },
        hostname: { type: "string", default: "0.0.0.0" },
        "max-body-bytes": {
          type: "string",
          default: String(SERVICE_LIMITS.maxBodyBytes.default),
        },
        "body-timeout-ms": {
          type: "string",
          default: String(SERVICE_LIMITS.bodyTimeoutMs.default),
        },
        "drain-timeout-ms": {
          type: "string",
          default: String(DEFAULT_DRAIN_TIMEOUT_MS),
        },
        "heartbeat-ms": {
          type: "string",
          default: String(SERVICE_LIMITS.heartbeatMs.default),
        },
        "max-streams": {
          type: "string",
          default: String(SERVICE_LIMITS.maxStreams.default),
        },
        "max-streams-per-client": {
          type: "string",
          default: String(SERVICE_LIMITS.maxStreamsPerClient.default),
        },
        "rate-limit": { type: "string" },
        "trust-proxy": { type: "boolean", default: false },
        "log-format": { type: "string", default: "text" },
        history: {
          type: "string",
          default: String(STORE_LIMITS.history.default),
        },
        "max-users": {
          type: "string",
          default: String(STORE_LIMITS.maxUsers.default),
        },
        store: { type: "string" },
        "redis-prefix": { type: "string", default: "lms:" },
        "cors-origin": { type: "string", multiple: true, default: [] },
        quiet: { type: "boolean", default: false },
        help: { type: "boolean", default: false },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const service = values.service;
  if (service !== "all" && service !== "messaging" && service !== "quote") {
    throw new UsageError(
      `${nameOf("service")} must be all, messaging or quote (got "${service}")`,
    );
  }
  if (values.hostname === "") {
    throw new UsageError(`${nameOf("hostname")} is empty`);
  }
  const envPort = values.port === undefined ? env("PORT") : undefined;
  const port = values.port !== undefined
    ? wholeNumber(nameOf("port"), values.port, PORTS)
    : envPort
    ? wholeNumber("PORT", envPort, PORTS)
    : 8000;
  const store = values.store ?? env("LMS_STORE") ?? "memory";
  if (!isStoreSpec(store)) {
    const source = values.store !== undefined ? nameOf("store") : "LMS_STORE";
    throw new UsageError(
      `${source} must be memory or a redis:// URL (got "${store}")`,
    );
  }
  const corsOrigins = values["cors-origin"];
  for (const origin of corsOrigins) {
    if (!isCorsOrigin(origin)) {
      throw new UsageError(
        `${
          nameOf("cors-origin")
        } must be * or an origin such as https://example.org:8443, with no path (got "${origin}")`,
      );
    }
  }
  const logFormat = values["log-format"];
  if (logFormat !== "text" && logFormat !== "json") {
    throw new UsageError(
      `${nameOf("log-format")} must be text or json (got "${logFormat}")`,
    );
  }
  const rate = values["rate-limit"];
  return {
    service,
    port,
    logFormat,
    rateLimit: rate === undefined
      ? undefined
      : rateLimit(nameOf("rate-limit"), rate),
    trustProxy: values["trust-proxy"],
    maxStreamsPerClient: wholeNumber(
      nameOf("max-streams-per-client"),
      values["max-streams-per-client"],
      SERVICE_LIMITS.maxStreamsPerClient,
    ),
    corsOrigins,
    store,
    redisPrefix: values["redis-prefix"],
    hostname: values.hostname,
    maxBodyBytes: wholeNumber(
      nameOf("max-body-bytes"),
      values["max-body-bytes"],
      SERVICE_LIMITS.maxBodyBytes,
    ),
    bodyTimeoutMs: wholeNumber(
      nameOf("body-timeout-ms"),
      values["body-timeout-ms"],
      SERVICE_LIMITS.bodyTimeoutMs,
    ),
    drainTimeoutMs: wholeNumber(
      nameOf("drain-timeout-ms"),
      values["drain-timeout-ms"],
      DRAIN_TIMEOUTS,
    ),
    heartbeatMs: wholeNumber(
      nameOf("heartbeat-ms"),
      values["heartbeat-ms"],
      SERVICE_LIMITS.heartbeatMs,
    ),
    maxStreams: wholeNumber(
      nameOf("max-streams"),
      values["max-streams"],
      SERVICE_LIMITS.maxStreams,
    ),
    history: wholeNumber(
      nameOf("history"),
      values.history,
      STORE_LIMITS.history,
    ),
    maxUsers: wholeNumber(
      nameOf("max-users"),
      values["max-users"],
      STORE_LIMITS.maxUsers,
    ),
    quiet: values.quiet,
    help: values.help,
  };
}

/** An environment variable, or `undefined` when unset or not permitted. */
export function readEnv(name: string): string | undefined {
  const state = Deno.permissions.querySync({ name: "env", variable: name });
  return state.state === "granted" ? Deno.env.get(name) : undefined;
}

/** The variable that stands for `flag` in the `deno serve` entry. */
function variableOf(flag: string): string {
  return `LMS_${flag.toUpperCase().replaceAll("-", "_")}`;
}

/**
 * The options of the `deno serve` entry, from `LMS_*` variables; a bad
 * value is a {@linkcode UsageError} naming the variable, not the flag.
 */
export function configFromEnv(
  env: (name: string) => string | undefined,
): Config {
  return parseFlags(flagsFromEnv(env), env, variableOf);
}

/** The flags named by `LMS_*` variables, for the `deno serve` entry, which takes no flags; throws {@linkcode UsageError}. */
export function flagsFromEnv(
  env: (name: string) => string | undefined,
): string[] {
  const flags: string[] = [];
  for (
    const flag of [
      "service",
      "max-body-bytes",
      "body-timeout-ms",
      "heartbeat-ms",
      "max-streams",
      "max-streams-per-client",
      "rate-limit",
      "log-format",
      "history",
      "max-users",
      "redis-prefix",
    ]
  ) {
    const value = env(variableOf(flag));
    if (value !== undefined) flags.push(`--${flag}=${value}`);
  }
  for (const flag of ["quiet", "trust-proxy"]) {
    const name = variableOf(flag);
    const value = env(name);
    if (value !== undefined && value !== "0" && value !== "1") {
      throw new UsageError(`${name} must be 0 or 1 (got "${value}")`);
    }
    if (value === "1") flags.push(`--${flag}`);
  }
  // Several origins are separated by white space or commas.
  const origins = env("LMS_CORS_ORIGIN")?.split(/[\s,]+/).filter(Boolean);
  for (const origin of origins ?? []) flags.push(`--cors-origin=${origin}`);
  return flags;
}

/**
 * The handler options `config` asks for, over `store`, with faults told to
 * `log`; the program adds the stop signals.
 */
export function handlerOptionsOf(
  config: Config,
  store: Store,
  log: ProgramLog,
): HandlerOptions {
  return {
    logFault: (error, req) =>
      log.fault(`fault in ${req.method} ${requestPath(req)}:`, error),
    service: config.service,
    store,
    maxBodyBytes: config.maxBodyBytes,
    bodyTimeoutMs: config.bodyTimeoutMs,
    heartbeatMs: config.heartbeatMs,
    maxStreams: config.maxStreams,
    maxStreamsPerClient: config.maxStreamsPerClient,
    rateLimit: config.rateLimit,
    clientOf: clientAddressOf({ trustProxy: config.trustProxy }),
    corsOrigins: config.corsOrigins,
  };
}
