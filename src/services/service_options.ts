/**
 * Options every service factory takes.
 * @module
 */

import { type BodyReader, createBodyReader } from "../http/body.ts";
import { StreamHub } from "../streams/stream_hub.ts";
import type { Store } from "../store/store.ts";
import type { RateLimit } from "../store/token_buckets.ts";
import {
  type ClientAddressOf,
  clientAddressOf,
} from "../http/client_address.ts";

/** The contract's default request body limit, in bytes. */
export const DEFAULT_MAX_BODY_BYTES = 65_536;

/** The contract's default time a request body may take to arrive, in milliseconds. */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

/** The contract's default quiet time before an event stream gets a heartbeat, in milliseconds. */
export const DEFAULT_HEARTBEAT_MS = 15_000;

/** The contract's default number of event streams one process keeps open. */
export const DEFAULT_MAX_STREAMS = 10_000;

/** The contract's default number of event streams one client may keep open. */
export const DEFAULT_MAX_STREAMS_PER_CLIENT = 20;

/**
 * Options of `createMessagingService` and `createQuoteService`.
 *
 * @example A smaller body limit
 * ```ts
 * import { createQuoteService, type ServiceOptions } from "@lms/light-messaging";
 * const options: ServiceOptions = { maxBodyBytes: 1024 };
 * createQuoteService(options);
 * ```
 */
export interface ServiceOptions {
  /** Where state lives. Default: a new in-memory store with the contract's limits. */
  store?: Store;
  /** The largest request body read, in bytes; larger ones are answered 413. Default 65,536. */
  maxBodyBytes?: number;
  /** How long a request body may take to arrive, in milliseconds; slower ones are answered 408. Default 10,000. */
  bodyTimeoutMs?: number;
  /** Aborted when the server stops waiting for requests in flight: body reads still waiting are answered 503 at once. */
  signal?: AbortSignal;
  /** After this many milliseconds without an event, an event stream gets a comment line. Default 15,000. */
  heartbeatMs?: number;
  /** How many event streams may be open at once; past it `GET /events` is 503. Default 10,000. */
  maxStreams?: number;
  /** How many event streams one client may have open at once; past it `GET /events` is 429. Default 20. */
  maxStreamsPerClient?: number;
  /**
   * Aborted when the server begins to stop: event streams end at once, so
   * shutdown need not wait for their readers, and `createHandler` answers
   * new requests 503 with `Connection: close` so that clients go elsewhere.
   */
  stopSignal?: AbortSignal;
  /** Each client's write allowance; past it writes are answered 429. Default: no limit. */
  rateLimit?: RateLimit;
  /** Who the client of a request is, for the limits. Default: the connection's address. */
  clientOf?: ClientAddressOf;
}

function wholeAtLeastOne(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a whole number of at least 1`);
  }
  return value;
}

/** The body reader the options describe, with the defaults filled in. */
export function bodyReaderOf(options: ServiceOptions): BodyReader {
  return createBodyReader({
    maxBytes: wholeAtLeastOne(
      options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      "maxBodyBytes",
    ),
    timeoutMs: wholeAtLeastOne(
      options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
      "bodyTimeoutMs",
    ),
    signal: options.signal,
  });
}

/** The event-stream hub the options describe, with the defaults filled in. */
export function streamHubOf(options: ServiceOptions): StreamHub {
  return new StreamHub({
    heartbeatMs: wholeAtLeastOne(
      options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
      "heartbeatMs",
    ),
    maxStreams: wholeAtLeastOne(
      options.maxStreams ?? DEFAULT_MAX_STREAMS,
      "maxStreams",
    ),
    maxStreamsPerClient: wholeAtLeastOne(
      options.maxStreamsPerClient ?? DEFAULT_MAX_STREAMS_PER_CLIENT,
      "maxStreamsPerClient",
    ),
    signal: options.stopSignal,
  });
}

/** Who the client of a request is, as the options say. */
export function clientOfOptions(options: ServiceOptions): ClientAddressOf {
  return options.clientOf ?? clientAddressOf();
}
