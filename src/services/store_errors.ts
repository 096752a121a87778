/**
 * How the services answer a store that refused: a store that cannot be
 * reached is 503, which tells a client to come back, not that it did
 * something wrong; a client out of write allowance is 429.
 * @module
 */

import { statusResponse } from "../http/response.ts";
import { tooManyWrites } from "../operations/rate_limit.ts";
import { RateLimited, StoreUnavailableError } from "../store/store.ts";

/** The router's error mapper for what stores throw. */
export function mapStoreError(error: unknown): Response | undefined {
  if (error instanceof StoreUnavailableError) {
    return statusResponse(503, { "retry-after": "1" });
  }
  if (error instanceof RateLimited) {
    return tooManyWrites(error.rate, error.waitMs);
  }
  return undefined;
}
