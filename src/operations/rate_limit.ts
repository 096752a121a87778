/**
 * The brake on a client that floods writes: every `POST` and `DELETE` of a
 * route table spends one of the client's allowance, kept by the store (so
 * every process on one Redis shares it); past it the write is answered 429
 * before anything is read or stored. Reads are never limited.
 * @module
 */

import type { ClientAddressOf } from "../http/client_address.ts";
import { errorResponse } from "../http/response.ts";
import type { Handler, Method, Routes } from "../http/router.ts";
import type { Store } from "../store/store.ts";
import type { RateLimit } from "../store/token_buckets.ts";

/** The methods that write, and so are limited. */
const WRITES: readonly Method[] = ["POST", "DELETE"];

const seconds = (ms: number) => {
  const whole = ms / 1000;
  return `${whole} second${whole === 1 ? "" : "s"}`;
};

/** The 429 of a client that must wait `waitMs`, with an honest `Retry-After`. */
export function tooManyWrites(rate: RateLimit, waitMs: number): Response {
  const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
  return errorResponse(
    [{
      location: "url",
      name: "rate",
      description:
        `Too many writes from this client: ${rate.burst} at once, then one every ${
          seconds(rate.periodMs)
        }; try again in ${seconds(retryAfter * 1000)}`,
    }],
    429,
    { "retry-after": String(retryAfter) },
  );
}

function limited(
  handler: Handler,
  store: Store,
  rate: RateLimit,
  clientOf: ClientAddressOf,
): Handler {
  return (req, info) => {
    const answer = (waitMs: number) =>
      waitMs > 0 ? tooManyWrites(rate, waitMs) : handler(req, info);
    const wait = store.spendAllowance(clientOf(req, info), rate);
    return wait instanceof Promise ? wait.then(answer) : answer(wait);
  };
}

/**
 * `routes` with every write limited to `rate` per client, or `routes`
 * itself when there is no rate.
 */
export function limitWrites(
  routes: Routes,
  options: { store: Store; rate?: RateLimit; clientOf: ClientAddressOf },
): Routes {
  const { store, rate, clientOf } = options;
  if (rate === undefined) return routes;
  if (
    !Number.isSafeInteger(rate.burst) || rate.burst < 1 ||
    !Number.isSafeInteger(rate.periodMs) || rate.periodMs < 1
  ) {
    throw new RangeError(
      "rateLimit needs a whole burst and periodMs of at least 1",
    );
  }
  const result: Routes = {};
  for (const [path, methods] of Object.entries(routes)) {
    const wrapped = { ...methods };
    for (const method of WRITES) {
      const handler = methods[method];
      if (handler) wrapped[method] = limited(handler, store, rate, clientOf);
    }
    result[path] = wrapped;
  }
  return result;
}
