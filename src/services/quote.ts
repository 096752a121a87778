/**
 * The quote service: `GET /quote` reads the one quote, `POST /quote` replaces it.
 * @module
 */

import { REFUSALS } from "../http/catalogue.ts";
import { refusalError } from "../http/http_error.ts";
import { lastValueCache } from "../http/last_value_cache.ts";
import { errorResponse, jsonResponse } from "../http/response.ts";
import { createRouter, type Handler, type Routes } from "../http/router.ts";
import { MemoryStore } from "../store/memory_store.ts";
import type {
  AuthFailures,
  ChangeFeed,
  QuoteCell,
  UserTokens,
} from "../store/store.ts";
import { quoteErrors } from "./quote_check.ts";
import { quoteEventsRoute } from "../streams/event_routes.ts";
import type { StreamHub } from "../streams/stream_hub.ts";
import {
  type ServiceOptions,
  servicePartsOf,
  streamHubOf,
} from "./service_options.ts";
import { mapStoreError } from "./store_errors.ts";

/**
 * What the quote service needs of its store (tokens for WebSocket token frames).
 *
 * @example Any store with these interfaces will do
 * ```ts
 * import { createQuoteService, MemoryStore, type QuoteStore } from "@lms/light-messaging";
 * const store: QuoteStore = new MemoryStore();
 * createQuoteService({ store });
 * ```
 */
export type QuoteStore = QuoteCell & ChangeFeed & UserTokens & AuthFailures;

/** The quote service's route table, for composing with other services. */
export function quoteRoutes(
  options: ServiceOptions<QuoteStore> = {},
  hub: StreamHub = streamHubOf(options),
): Routes {
  const store = options.store ?? new MemoryStore();
  const { body, allowance, streams } = servicePartsOf(options, store);
  const quoteBody = lastValueCache(JSON.stringify);
  const answer = (quote: string) => jsonResponse(quoteBody(quote));
  return {
    "/quote": {
      GET() {
        const quote = store.getQuote();
        return quote instanceof Promise ? quote.then(answer) : answer(quote);
      },
      async POST(req, info) {
        const text = await body.text(req);
        if (text === null) {
          return refusalError(REFUSALS.quoteNotUtf8).getResponse();
        }
        const errors = quoteErrors(text);
        if (errors.length > 0) return errorResponse(errors);
        await store.setQuote(text, allowance(req, info));
        return jsonResponse("null");
      },
    },
    "/quote/events": quoteEventsRoute(store, hub, streams),
  };
}

/**
 * Builds the quote service as one handler.
 *
 * @example Replacing the quote without a socket
 * ```ts
 * import assert from "node:assert/strict";
 * import { createQuoteService } from "@lms/light-messaging";
 * const quote = createQuoteService();
 * await quote(
 *   new Request("http://localhost/quote", { method: "POST", body: "Hi!" }),
 * );
 * const res = await quote(new Request("http://localhost/quote"));
 * assert.equal(await res.json(), "Hi!");
 * ```
 */
export function createQuoteService(
  options: ServiceOptions<QuoteStore> = {},
): Handler {
  return createRouter(quoteRoutes(options), { mapError: mapStoreError });
}
