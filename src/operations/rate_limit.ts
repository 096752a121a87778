/**
 * Each write hands the store its client's allowance, spent in the same
 * atomic step (on Redis, shared by every process); reads are never limited.
 * @module
 */

import type { ClientAddressOf } from "../http/client_address.ts";
import type { ConnectionInfo } from "../http/router.ts";
import type { Allowance } from "../store/store.ts";
import type { RateLimit } from "../store/token_buckets.ts";
import { isWithin } from "../limits/whole_range.ts";

/** Also `--rate-limit`'s; the refill bound keeps a bucket's expiry whole in Redis's Lua (14 significant digits). */
export const RATE_LIMIT_BOUNDS = {
  burst: { min: 1, max: 1_000_000_000 },
  periodMs: { min: 1, max: 86_400_000 },
  maxRefillMs: 86_400_000_000_000,
} as const;

export function isRateWithinBounds(rate: RateLimit): boolean {
  return isWithin(RATE_LIMIT_BOUNDS.burst, rate.burst) &&
    isWithin(RATE_LIMIT_BOUNDS.periodMs, rate.periodMs) &&
    rate.burst * rate.periodMs <= RATE_LIMIT_BOUNDS.maxRefillMs;
}

/** `undefined` when writes are not limited. */
export type AllowanceOf = (
  req: Request,
  info?: ConnectionInfo,
) => Allowance | undefined;

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
