/**
 * `GET /messages?before=ID&limit=N`: the retained messages, newest first.
 * @module
 */

import { entryOf, type ErrorEntry, REFUSALS } from "../http/catalogue.ts";
import { errorResponse, jsonResponse } from "../http/response.ts";
import type { Routes } from "../http/router.ts";
import {
  isWithin,
  type WholeLimit,
  type WholeRange,
} from "../limits/whole_range.ts";
import type { MessageLog, MessagePage } from "../store/store.ts";

/** From 1 to the largest whole number JSON readers hold exactly. */
export const HISTORY_BEFORE: WholeRange = {
  min: 1,
  max: Number.MAX_SAFE_INTEGER,
};

export const HISTORY_LIMIT = {
  default: 20,
  min: 1,
  max: 100,
} as const satisfies WholeLimit;

/** `undefined` when absent, `null` when not a whole number within `range`. */
function wholeParameter(
  query: URLSearchParams,
  name: string,
  range: WholeRange,
): number | undefined | null {
  const text = query.get(name);
  if (text === null) return undefined;
  // Digits only: Number() would take "", " 5", "1e3", "0x10" and "+5".
  const value = /^[0-9]{1,20}$/.test(text) ? Number(text) : NaN;
  return isWithin(range, value) ? value : null;
}

/** Stored messages are spliced in unparsed, so their numbers keep their digits. */
function pageBody({ messages, next }: MessagePage): string {
  const items = messages.map(({ id, json }) =>
    `{"id":${id},"message":${json}}`
  );
  return `{"messages":[${items.join(",")}],"next":${next}}`;
}

export function historyRoutes(store: MessageLog): Routes {
  function readHistory(req: Request): Response | Promise<Response> {
    const query = new URL(req.url).searchParams;
    const before = wholeParameter(query, "before", HISTORY_BEFORE);
    const limit = wholeParameter(query, "limit", HISTORY_LIMIT);
    const errors: ErrorEntry[] = [];
    if (before === null) {
      errors.push(entryOf(REFUSALS.historyBefore, { max: HISTORY_BEFORE.max }));
    }
    if (limit === null) {
      errors.push(entryOf(REFUSALS.historyLimit, { max: HISTORY_LIMIT.max }));
    }
    if (before === null || limit === null) return errorResponse(errors);
    const page = store.olderMessages(before, limit ?? HISTORY_LIMIT.default);
    return page instanceof Promise
      ? page.then((p) => jsonResponse(pageBody(p)))
      : jsonResponse(pageBody(page));
  }
  return { "/messages": { GET: readHistory } };
}
