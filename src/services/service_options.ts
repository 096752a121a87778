/**
 * Options every service factory takes.
 * @module
 */

import { createBodyReader } from "../http/body.ts";
import { StreamHub } from "../streams/stream_hub.ts";
import {
  type AuthFailures,
  HEARTBEAT_MS,
  type Store,
  type UserTokens,
} from "../store/store.ts";
import {
  AUTH_FAILURES_DEFAULT,
  type AuthOutcome,
  createAuthenticator,
} from "../auth/guesses.ts";
import { allowanceOf, checkRate } from "../operations/rate_limit.ts";
import type { RateLimit } from "../store/token_buckets.ts";
import {
  type ClientAddressOf,
  clientAddressOf,
} from "../http/client_address.ts";
import { checkWithin, type WholeLimit } from "../limits/whole_range.ts";
import { sameOriginOrAllowed } from "../http/origin.ts";

/** Each number's default (the contract's) and range, which the flags share. */
export const SERVICE_LIMITS = {
  maxBodyBytes: { default: 65_536, min: 1, max: 2 ** 30 },
  bodyTimeoutMs: { default: 10_000, min: 1, max: 3_600_000 },
  heartbeatMs: HEARTBEAT_MS,
  maxStreams: { default: 10_000, min: 1, max: 1_000_000 },
  maxStreamsPerClient: { default: 20, min: 1, max: 1_000_000 },
  maxWebSocketsPerClient: { default: 4, min: 1, max: 1_000_000 },
  maxStreamBufferBytes: { default: 64 * 1024 * 1024, min: 1, max: 2 ** 40 },
} as const satisfies Record<string, WholeLimit>;

/**
 * Options of `createMessagingService` and `createQuoteService`; `S`: what each needs of a {@linkcode Store}.
 *
 * @example A smaller body limit
 * ```ts
 * import assert from "node:assert/strict";
 * import { createQuoteService, type ServiceOptions } from "@lms/light-messaging";
 * const options: ServiceOptions = { maxBodyBytes: 16 };
 * const quote = createQuoteService(options);
 * const post = (body: string) =>
 *   quote(new Request("http://localhost/quote", { method: "POST", body }));
 * assert.equal((await post("Short enough.")).status, 200);
 * assert.equal((await post("Longer than sixteen bytes.")).status, 413);
 * ```
 */
export interface ServiceOptions<S = Store> {
  /** Where state lives. Default: a new in-memory store with the contract's limits. */
  store?: S;
  /** The largest request body read, in bytes; larger ones are answered 413. 1 to 2^30; default 65,536. */
  maxBodyBytes?: number;
  /** How long a request body may take to arrive, in milliseconds; slower ones are answered 408. 1 to 3,600,000; default 10,000. */
  bodyTimeoutMs?: number;
  /** Aborted when the server stops waiting for requests in flight: body reads still waiting are answered 503 at once. */
  signal?: AbortSignal;
  /** After this many milliseconds without an event, an event stream gets a comment line. 10 to 3,600,000; default 15,000. */
  heartbeatMs?: number;
  /** How many event streams may be open at once; past it `GET /events` is 503. 1 to 1,000,000; default 10,000. */
  maxStreams?: number;
  /** How many event streams one client may have open at once; past it `GET /events` is 429. 1 to 1,000,000; default 20. */
  maxStreamsPerClient?: number;
  /** Of one client's streams, how many may be WebSockets (Deno holds each frame whole, up to 64 MiB); past it 429. 1 to 1,000,000; default 4. */
  maxWebSocketsPerClient?: number;
  /** Whether an upgrade on a stream route opens a WebSocket; when not, it is refused (400). Default: true. */
  webSockets?: boolean;
  /** Bytes that may wait for all stream readers together; past it the furthest behind are ended. 1 to 2^40; default 64 MiB. */
  maxStreamBufferBytes?: number;
  /** Aborted when the server begins to stop: streams end at once, and `createHandler` answers new requests 503. */
  stopSignal?: AbortSignal;
  /** Each client's write allowance; past it writes are answered 429. Default: no limit. */
  rateLimit?: RateLimit;
  /** Each client's failed authentications before its authenticated requests are 429; `false`: no limit. Default: 100, then one per 100 ms. */
  authFailures?: RateLimit | false;
  /** Told of each failed authentication and each refusal for guessing (metrics count them). */
  onAuthOutcome?: (outcome: AuthOutcome) => void;
  /** Who the client of a request is, for the limits. Default: the connection's address. */
  clientOf?: ClientAddressOf;
  /** Origins (`https://example.org`, or `*`) whose pages may call every route and open WebSockets; other foreign ones get 403. Default: none. */
  corsOrigins?: readonly string[];
  /** Whether other processes share the port (`--reuse-port`): a full process then asks for a retry after 1 s, not 5, as the kernel places the retry at random. Default: no. */
  reusePort?: boolean;
  /** Whether to trust the last `X-Forwarded-For` and `X-Forwarded-Host` for the client and the service's own origin. Default: no. */
  trustProxy?: boolean;
}

function limitOf(
  options: ServiceOptions<unknown>,
  name: keyof typeof SERVICE_LIMITS,
): number {
  const limit = SERVICE_LIMITS[name];
  return checkWithin(name, limit, options[name] ?? limit.default);
}

/** The event-stream hub the options describe. */
export function streamHubOf(options: ServiceOptions<unknown>): StreamHub {
  return new StreamHub({
    heartbeatMs: limitOf(options, "heartbeatMs"),
    maxStreams: limitOf(options, "maxStreams"),
    maxStreamsPerClient: limitOf(options, "maxStreamsPerClient"),
    maxWebSocketsPerClient: limitOf(options, "maxWebSocketsPerClient"),
    maxTotalQueuedBytes: limitOf(options, "maxStreamBufferBytes"),
    signal: options.stopSignal,
  });
}

/** What each service builds from its options over its store. */
export type ServiceParts = ReturnType<typeof servicePartsOf>;

export function servicePartsOf(
  options: ServiceOptions<unknown>,
  store: UserTokens & AuthFailures,
) {
  const clientOf = options.clientOf ??
    clientAddressOf({ trustProxy: options.trustProxy });
  const rate = options.authFailures === false
    ? undefined
    : options.authFailures ?? AUTH_FAILURES_DEFAULT;
  const auth = createAuthenticator({
    store,
    rate: rate && checkRate("authFailures", rate),
    clientOf,
    report: options.onAuthOutcome,
  });
  return {
    body: createBodyReader({
      maxBytes: limitOf(options, "maxBodyBytes"),
      timeoutMs: limitOf(options, "bodyTimeoutMs"),
      signal: options.signal,
    }),
    // Each write spends its client's allowance in the store's own step.
    allowance: allowanceOf(options.rateLimit, clientOf),
    auth,
    streams: {
      clientOf,
      auth,
      originOf: sameOriginOrAllowed(options.corsOrigins, {
        trustProxy: options.trustProxy,
      }),
      webSockets: options.webSockets ?? true,
      sharedPort: options.reusePort ?? false,
    },
  };
}
