/**
 * Options every service factory takes.
 * @module
 */

import type { Store } from "../store/store.ts";

/** The contract's default request body limit, in bytes. */
export const DEFAULT_MAX_BODY_BYTES = 65_536;

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
}

/** Checks a body limit and fills in the default. */
export function resolveMaxBodyBytes(options: ServiceOptions): number {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(limit) || limit < 1) {
    throw new RangeError("maxBodyBytes must be a whole number of at least 1");
  }
  return limit;
}
