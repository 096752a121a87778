/**
 * The brake on a client that floods writes. Every write (registering,
 * unregistering, posting, replacing the quote) hands the store its client's
 * allowance, which the store spends in the same atomic step as the write:
 * on Redis, in the write's own script and round trip, so every process on
 * one Redis shares one allowance. A client with none left is answered 429
 * and nothing is stored. Reads are never limited.
 * @module
 */

import type { ClientAddressOf } from "../http/client_address.ts";
import { REFUSALS } from "../http/catalogue.ts";
import { waitRefusal } from "../http/http_error.ts";
import type { ConnectionInfo } from "../http/router.ts";
import type { Allowance } from "../store/store.ts";
import type { RateLimit } from "../store/token_buckets.ts";
import { isWithin } from "../limits/whole_range.ts";

/**
 * The rates a rate limit may have; the program's `--rate-limit` takes the
 * same. A full allowance refills within `maxRefillMs`, so that Redis's Lua,
 * which writes numbers with 14 digits, still writes a bucket's expiry as a
 * whole number.
 */
export const RATE_LIMIT_BOUNDS = {
  burst: { min: 1, max: 1_000_000_000 },
  periodMs: { min: 1, max: 86_400_000 },
  maxRefillMs: 86_400_000_000_000,
} as const;

/** Whether `rate` is within {@linkcode RATE_LIMIT_BOUNDS}. */
export function isRateWithinBounds(rate: RateLimit): boolean {
  return isWithin(RATE_LIMIT_BOUNDS.burst, rate.burst) &&
    isWithin(RATE_LIMIT_BOUNDS.periodMs, rate.periodMs) &&
    rate.burst * rate.periodMs <= RATE_LIMIT_BOUNDS.maxRefillMs;
}

/** The 429 of a client that must wait `waitMs`, with an honest `Retry-After`. */
export function tooManyWrites(rate: RateLimit, waitMs: number): Response {
  return waitRefusal(REFUSALS.tooManyWrites, rate, waitMs).getResponse();
}

/** Finds the allowance a request's write spends, or `undefined` when writes are not limited. */
export type AllowanceOf = (
  req: Request,
  info?: ConnectionInfo,
) => Allowance | undefined;

/**
 * The allowance of each request's client under `rate`, or none at all
 * without a rate.
 */
export function allowanceOf(
  rate: RateLimit | undefined,
  clientOf: ClientAddressOf,
): AllowanceOf {
  if (rate === undefined) return () => undefined;
  checkRate("rateLimit", rate);
  return (req, info) => ({ client: clientOf(req, info), rate });
}

/** `rate`, or a `RangeError` naming the option `name` when it is out of {@linkcode RATE_LIMIT_BOUNDS}. */
export function checkRate(name: string, rate: RateLimit): RateLimit {
  if (!isRateWithinBounds(rate)) {
    const { burst, periodMs, maxRefillMs } = RATE_LIMIT_BOUNDS;
    throw new RangeError(
      `${name} needs a whole burst from ${burst.min} to ${burst.max} and periodMs from ${periodMs.min} to ${periodMs.max}, burst × periodMs at most ${maxRefillMs}`,
    );
  }
  return rate;
}
