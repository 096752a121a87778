/**
 * An unreachable store is 503 (come back), not the client's fault; one out of write allowance is 429.
 * @module
 */

import { REFUSALS } from "../http/catalogue.ts";
import { waitRefusal } from "../http/http_error.ts";
import { statusResponse } from "../http/response.ts";
import { RateLimited, StoreUnavailableError } from "../store/store.ts";

export function mapStoreError(error: unknown): Response | undefined {
  if (error instanceof StoreUnavailableError) {
    return statusResponse(503, { "retry-after": "1" });
  }
  if (error instanceof RateLimited) {
    return waitRefusal(REFUSALS.tooManyWrites, error.rate, error.waitMs)
      .getResponse();
  }
  return undefined;
}
