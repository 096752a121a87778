/**
 * What each route of the quote service says of itself, for the OpenAPI document.
 * @module
 */

import { REFUSALS } from "../http/catalogue.ts";
import type { Operations } from "../http/operation.ts";
import { streamOperation } from "../streams/stream_operations.ts";
import { QUOTE_SCHEMA } from "./quote_check.ts";

/** As `quoteRoutes` serves them. */
export const QUOTE_OPERATIONS: Operations = {
  "/quote": {
    GET: {
      operationId: "getQuote",
      summary: "The quote",
      answer: {
        description: "The quote, as a JSON string.",
        schema: { type: "string" },
        example: "Not set, yet !",
      },
    },
    POST: {
      operationId: "setQuote",
      summary: "Replace the quote",
      description:
        "Both checks run: the first character must be ASCII `A`–`Z`, the last `.`, `?` or `!`.",
      body: {
        description: "The new quote, as raw UTF-8 text.",
        type: "text/plain; charset=UTF-8",
        schema: QUOTE_SCHEMA,
        example: "Hello, world!",
      },
      answer: { description: "Replaced.", schema: { type: "null" } },
      refusals: [REFUSALS.quoteStart, REFUSALS.quoteEnd, REFUSALS.quoteNotUtf8],
    },
  },
  "/quote/events": {
    GET: streamOperation({
      operationId: "followQuote",
      summary: "The quote, live (server-sent events)",
      description:
        "Opens with `retry: 1000` and the current quote, then every replacement: `event: quote`, `data: <the quote as a JSON string>`. No ids: the newest value is all a reader needs.",
      example: 'retry: 1000\n\nevent: quote\ndata: "Not set, yet !"\n\n',
    }),
  },
};
