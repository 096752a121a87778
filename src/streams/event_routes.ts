/**
 * `GET /events` (new messages, with catch-up by id) and `GET /quote/events`
 * (the quote, then each replacement): the routes of the two event streams.
 * @module
 */

import { HttpError } from "../http/http_error.ts";
import type { Handler, Method } from "../http/router.ts";
import type { Store, StoreEvent } from "../store/store.ts";
import { authenticate, TOKEN_HEADER } from "../services/auth.ts";
import { presenceTrackerOf } from "../presence/presence_tracker.ts";
import {
  encodeEvent,
  EVENT_STREAM_CONTENT_TYPE,
  RETRY,
} from "./event_stream_format.ts";
import type { EventStream, StreamHub, StreamRefusal } from "./stream_hub.ts";
import type { ClientAddressOf } from "../http/client_address.ts";

const STREAM_HEADERS = {
  "content-type": EVENT_STREAM_CONTENT_TYPE,
  "cache-control": "no-cache",
};

/** How many messages a reader without `Last-Event-ID` gets first: what `GET /` answers. */
const NEWEST_COUNT = 5;

/** `Last-Event-ID` as a message id, or `undefined` when absent or not a whole number. */
function lastEventId(req: Request): number | undefined {
  const value = req.headers.get("last-event-id");
  return value !== null && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}

/** How long a reader is asked to wait when the process cannot follow changes: the subscription retries at least every second. */
const FOLLOW_RETRY_SECONDS = 1;

/**
 * The answer while this process cannot hear of new changes: a stream
 * opened now would wait in vain for messages stored elsewhere, so none is
 * opened. `Retry-After` says when to try again, here or elsewhere.
 */
const NOT_FOLLOWING = new HttpError(503, [{
  location: "url",
  name: "events",
  description:
    "This server cannot follow new changes right now (its connection to the shared store is being restored); try again shortly",
}], { "retry-after": String(FOLLOW_RETRY_SECONDS) });

const REFUSALS = {
  full: new HttpError(503, [{
    location: "url",
    name: "events",
    description:
      "Too many event streams are open on this server; try again later",
  }]),
  "client-full": new HttpError(429, [{
    location: "url",
    name: "events",
    description:
      "Too many event streams are open from this client; close one first",
  }]),
} satisfies Record<StreamRefusal, HttpError>;

/**
 * Opens a stream of `topic`, has `catchUp` write its first events, and
 * answers with it. Nothing is opened while the store cannot hear of every
 * change, and a stream whose catch-up overlapped a moment when it could
 * not (the subscription lost, even if back by then) is not answered 200:
 * changes stored meanwhile reached neither the catch-up nor the stream.
 * Its reader is told to come back instead (503, `Retry-After`). A failure
 * releases the stream. `opened` is told of the stream once it is live.
 */
async function openStream(
  store: Store,
  hub: StreamHub,
  topic: string,
  client: string,
  catchUp: (stream: EventStream) => Promise<void>,
  opened?: (stream: EventStream) => void,
): Promise<Response> {
  const epoch = store.subscriptionEpoch();
  if (epoch === undefined) throw NOT_FOLLOWING;
  const stream = hub.open(topic, client);
  if (typeof stream === "string") throw REFUSALS[stream];
  try {
    stream.write(RETRY);
    await catchUp(stream);
  } catch (error) {
    stream.end(true);
    throw error;
  }
  if (!stream.open || store.subscriptionEpoch() !== epoch) {
    stream.end(true);
    throw NOT_FOLLOWING;
  }
  stream.live();
  opened?.(stream);
  return new Response(stream.body, { headers: STREAM_HEADERS });
}

/**
 * Who a stream is read by: the user its `X-Messaging-Token` names, or
 * `undefined` without the header. A header that does not authenticate is
 * refused (401), as on every other route, rather than opened anonymously:
 * its reader would believe itself online when it is not.
 */
async function readerOf(
  req: Request,
  store: Store,
): Promise<string | undefined> {
  if (!req.headers.has(TOKEN_HEADER)) return undefined;
  const user = await authenticate(req, store);
  if (user === null) throw new HttpError(401);
  return user.name;
}

/** The `presence` event's data for a change of presence or an unregistration. */
function presenceData(
  event: Extract<StoreEvent, { kind: "presence" | "unregistered" }>,
): string {
  return JSON.stringify(
    event.kind === "presence"
      ? { name: event.name, online: event.online }
      : { name: event.name, registered: false },
  );
}

/**
 * `HEAD` answers the stream's headers at once, opening nothing. An empty
 * stream rather than no body, so that Deno does not add the
 * `content-length: 0` the endless `GET` answer never has.
 */
const head = () =>
  new Response(new ReadableStream({ start: (c) => c.close() }), {
    headers: STREAM_HEADERS,
  });

/**
 * The route of `GET /events`: the newest messages (or those after
 * `Last-Event-ID`), then each new one, and every change of presence. A
 * stream opened with `X-Messaging-Token` makes its user online while it
 * is open.
 */
export function messageEventsRoute(
  store: Store,
  hub: StreamHub,
  clientOf: ClientAddressOf,
): Partial<Record<Method, Handler>> {
  const presence = presenceTrackerOf(store);
  hub.feed("messages", () =>
    store.subscribe((event) => {
      // Encoded once, for the first reader: an event nobody reads costs nothing.
      let chunk: Uint8Array | undefined;
      if (event.kind === "message") {
        for (const stream of hub.readers("messages")) {
          chunk ??= encodeEvent("message", event.json, event.id);
          stream.deliver(event.id, chunk);
        }
      } else if (event.kind === "presence" || event.kind === "unregistered") {
        // No id: presence is no message, and a catch-up does not replay it.
        for (const stream of hub.readers("messages")) {
          chunk ??= encodeEvent("presence", presenceData(event));
          stream.deliverLatest(chunk);
        }
      } else if (event.kind === "reset") hub.endAll("messages");
    }));
  return {
    GET: async (req, info) => {
      const reader = await readerOf(req, store);
      return openStream(
        store,
        hub,
        "messages",
        clientOf(req, info),
        async (stream) => {
          const after = lastEventId(req);
          let recent = await store.recentMessages(
            after ?? 0,
            after === undefined ? NEWEST_COUNT : undefined,
          );
          let resuming = after !== undefined;
          if (after !== undefined && after > recent.newestId) {
            // The store started afresh: the reader's id means nothing here.
            recent = await store.recentMessages(0, NEWEST_COUNT);
            resuming = false;
          }
          if (resuming && recent.missed > 0) {
            stream.write(
              encodeEvent("gap", JSON.stringify({ missed: recent.missed })),
            );
          }
          for (const { id, json } of recent.messages) {
            stream.write(encodeEvent("message", json, id));
          }
          // Everything up to the newest id is accounted for: sent, or older
          // than what a reader without an id gets.
          stream.lastId = recent.newestId;
        },
        reader === undefined
          ? undefined
          : (stream) => stream.whenEnded(presence.streamOpened(reader)),
      );
    },
    HEAD: head,
  };
}

/** The route of `GET /quote/events`: the current quote, then each replacement. */
export function quoteEventsRoute(
  store: Store,
  hub: StreamHub,
  clientOf: ClientAddressOf,
): Partial<Record<Method, Handler>> {
  hub.feed("quote", () =>
    store.subscribe((event) => {
      if (event.kind === "quote") {
        let chunk: Uint8Array | undefined;
        for (const stream of hub.readers("quote")) {
          chunk ??= encodeEvent("quote", JSON.stringify(event.quote));
          stream.deliverLatest(chunk);
        }
      } else if (event.kind === "reset") hub.endAll("quote");
    }));
  return {
    GET: (req, info) =>
      openStream(store, hub, "quote", clientOf(req, info), async (stream) => {
        const quote = await store.getQuote();
        stream.write(encodeEvent("quote", JSON.stringify(quote)));
      }),
    HEAD: head,
  };
}
