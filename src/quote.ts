/**
 * The quote service: `GET /quote` reads the one quote, `POST /quote` replaces
 * it with raw text that starts with a capital A–Z and ends with `.`, `?` or `!`.
 * @module
 */

import {
  encodeJson,
  type ErrorEntry,
  errorResponse,
  jsonResponse,
  lastValueCache,
  readText,
} from "./http.ts";
import { MemoryStore } from "./memory_store.ts";
import { resolveMaxBodyBytes, type ServiceOptions } from "./options.ts";
import { createRouter, type Handler, type Routes } from "./router.ts";

const NULL_BODY = encodeJson(null);

/** The format errors of a proposed quote, in the contract's order; empty when it passes. */
export function quoteErrors(text: string): ErrorEntry[] {
  const errors: ErrorEntry[] = [];
  const first = text.charCodeAt(0);
  if (!(first >= 0x41 && first <= 0x5a)) {
    errors.push({
      location: "body",
      name: "quote",
      description: "Does not start with a majuscule",
    });
  }
  const last = text.at(-1);
  if (last !== "." && last !== "?" && last !== "!") {
    errors.push({
      location: "body",
      name: "quote",
      description: "Does not end properly",
    });
  }
  return errors;
}

/** The quote service's route table, for composing with other services. */
export function quoteRoutes(options: ServiceOptions = {}): Routes {
  const store = options.store ?? new MemoryStore();
  const maxBodyBytes = resolveMaxBodyBytes(options);
  const quoteBody = lastValueCache(encodeJson);
  const answer = (quote: string) => jsonResponse(quoteBody(quote));

  return {
    "/quote": {
      GET() {
        const quote = store.getQuote();
        return quote instanceof Promise ? quote.then(answer) : answer(quote);
      },
      async POST(req) {
        const text = await readText(req, maxBodyBytes);
        if (text === null) {
          return errorResponse([{
            location: "body",
            name: "quote",
            description: "Quote is not valid UTF-8",
          }]);
        }
        const errors = quoteErrors(text);
        if (errors.length > 0) return errorResponse(errors);
        await store.setQuote(text);
        return jsonResponse(NULL_BODY);
      },
    },
  };
}

/** Builds the quote service as one handler. */
export function createQuoteService(options: ServiceOptions = {}): Handler {
  return createRouter(quoteRoutes(options));
}
