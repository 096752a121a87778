/**
 * How the services answer a store that cannot be reached: 503, which tells a
 * client to come back, not that it did something wrong.
 * @module
 */

import { statusResponse } from "../http/response.ts";
import { StoreUnavailableError } from "../store/store.ts";

/** The router's error mapper for store failures. */
export function mapStoreError(error: unknown): Response | undefined {
  return error instanceof StoreUnavailableError
    ? statusResponse(503)
    : undefined;
}
