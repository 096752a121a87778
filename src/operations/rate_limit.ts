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
import { errorResponse } from "../http/response.ts";
import type { ConnectionInfo } from "../http/router.ts";
import type { Allowance } from "../store/store.ts";
import type { RateLimit } from "../store/token_buckets.ts";

const seconds = (whole: number) => `${whole} second${whole === 1 ? "" : "s"}`;

/** The 429 of a client that must wait `waitMs`, with an honest `Retry-After`. */
export function tooManyWrites(rate: RateLimit, waitMs: number): Response {
  const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
  return errorResponse(
    [{
      location: "url",
      name: "rate",
      description:
        `Too many writes from this client: ${rate.burst} at once, then one every ${
          seconds(rate.periodMs / 1000)
        }; try again in ${seconds(retryAfter)}`,
    }],
    429,
    { "retry-after": String(retryAfter) },
  );
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
  if (
    !Number.isSafeInteger(rate.burst) || rate.burst < 1 ||
    !Number.isSafeInteger(rate.periodMs) || rate.periodMs < 1
  ) {
    throw new RangeError(
      "rateLimit needs a whole burst and periodMs of at least 1",
    );
  }
  return (req, info) => ({ client: clientOf(req, info), rate });
}
