/**
 * `GET /events` (new messages, with catch-up by id) and `GET /quote/events`
 * (the quote, then each replacement): the routes of the two event streams,
 * each served as server-sent events or, on an upgrade request, as a
 * WebSocket. Both transports are readers of the same hub: the same caps,
 * catch-up and order.
 * @module
 */

import { REFUSALS } from "../http/catalogue.ts";
import { HttpError, refusalError } from "../http/http_error.ts";
import type { ConnectionInfo, Handler, Method } from "../http/router.ts";
import type {
  ChangeFeed,
  MessageLog,
  PresenceBoard,
  QuoteCell,
  StoreEvent,
} from "../store/store.ts";
import { splitCredential, TOKEN_HEADER } from "../auth/auth.ts";
import type { Authenticator } from "../auth/guesses.ts";
import {
  type PresenceTracker,
  presenceTrackerOf,
} from "../presence/presence_tracker.ts";
import {
  EVENT_STREAM_CONTENT_TYPE,
  StreamEvent,
} from "./event_stream_format.ts";
import type {
  EventStream,
  StreamHub,
  StreamKind,
  StreamRefusal,
} from "./stream_hub.ts";
import type { ClientAddressOf } from "../http/client_address.ts";
import { MessageChunks } from "./message_chunks.ts";
import { SseTransport } from "./sse_transport.ts";
import type { Transport, TransportFactory } from "./transport.ts";
import { WebSocketTransport } from "./websocket_transport.ts";
import type { OriginCheck } from "../http/origin.ts";

const STREAM_HEADERS = {
  "content-type": EVENT_STREAM_CONTENT_TYPE,
  "cache-control": "no-cache",
};

/** How many messages a reader without `Last-Event-ID` gets first: what `GET /` answers. */
const NEWEST_COUNT = 5;

/**
 * `Last-Event-ID` as a message id, or else `?lastEventId=` (a browser
 * cannot send the header on its first connection, nor on a WebSocket);
 * `undefined` when absent or not a whole number. The header wins when
 * both are sent, even when it is not usable: it is what `EventSource`
 * says on reconnecting, and newer than the page's URL.
 */
export function lastEventId(req: Request): number | undefined {
  const value = req.headers.get("last-event-id") ??
    new URL(req.url).searchParams.get("lastEventId");
  // Leading zeros do not make a whole number another; past 15 digits it is
  // above any id a store gives, so absent.
  const digits = value?.match(/^0*(\d{1,15})$/)?.[1];
  return digits === undefined ? undefined : Number(digits);
}

/** How long a reader is asked to wait when the process cannot follow changes: the subscription retries at least every second. */
const FOLLOW_RETRY_SECONDS = 1;

/**
 * The answer while this process cannot hear of new changes: a stream
 * opened now would wait in vain for messages stored elsewhere, so none is
 * opened. `Retry-After` says when to try again, here or elsewhere.
 */
const NOT_FOLLOWING = refusalError(REFUSALS.notFollowing, {}, {
  "retry-after": String(FOLLOW_RETRY_SECONDS),
});

/**
 * The answer to an event stream cut during its catch-up because all
 * readers together had more waiting than the server allows, this one
 * furthest behind: others will have taken theirs shortly.
 */
const READERS_BEHIND = refusalError(REFUSALS.readersBehind, {}, {
  "retry-after": String(FOLLOW_RETRY_SECONDS),
});

/**
 * When a reader refused for a cap may try again: a place frees only when
 * some reader leaves, which no clock tells, so a few seconds keep a
 * retrying client from hammering while places stay taken.
 */
const CAP_RETRY = { "retry-after": "5" };

const CAP_REFUSALS = {
  full: refusalError(REFUSALS.streamsFull, {}, CAP_RETRY),
  "client-full": refusalError(REFUSALS.clientStreamsFull, {}, CAP_RETRY),
  "client-websockets-full": refusalError(
    REFUSALS.clientWebSocketsFull,
    {},
    CAP_RETRY,
  ),
} satisfies Record<StreamRefusal, HttpError>;

const WEBSOCKET_OFF = refusalError(REFUSALS.webSocketsOff);

/** What both transports of one route share. */
interface StreamRoute {
  store: ChangeFeed;
  hub: StreamHub;
  topic: string;
  clientOf: ClientAddressOf;
  /** Checks the tokens readers send (on either stream). */
  auth: Authenticator;
  originOf: OriginCheck;
  webSockets: boolean;
  /** Writes a new stream's first events; `after`: the reader's resume id. */
  catchUp: (after: number | undefined, stream: EventStream) => Promise<void>;
  /** Counts authenticated readers online; only where presence is told (messages). */
  presence?: PresenceTracker;
}

/**
 * Opens a stream over the transport `transport` builds, or refuses: while
 * the store cannot hear of every change (503 with `Retry-After`, so that
 * no stream waits in vain), and past the caps, which count every
 * transport together. The stream holds its places under the caps until
 * `connection` settles.
 */
function openOn<T extends Transport>(
  route: StreamRoute,
  client: string,
  transport: TransportFactory<T>,
  connection: Promise<unknown> | undefined,
  kind: StreamKind,
): { stream: EventStream<T>; epoch: number } {
  const epoch = route.store.subscriptionEpoch();
  if (epoch === undefined) throw NOT_FOLLOWING;
  const stream = route.hub.open(
    route.topic,
    client,
    transport,
    connection,
    kind,
  );
  if (typeof stream === "string") throw CAP_REFUSALS[stream];
  return { stream, epoch };
}

/**
 * Catches `stream` up, then lets it go live. A stream whose catch-up
 * overlapped a moment when the store could not hear of changes (the
 * subscription lost, even if back by then) is ended rather than let go
 * live: changes stored meanwhile reached neither the catch-up nor the
 * stream, and its reader reconnects and catches up. Answers whether the
 * stream went live; a failed catch-up ends it and throws.
 */
async function catchUpThenLive(
  route: StreamRoute,
  after: number | undefined,
  stream: EventStream,
  epoch: number,
): Promise<boolean> {
  try {
    await route.catchUp(after, stream);
  } catch (error) {
    stream.end("fault");
    throw error;
  }
  if (!stream.open || route.store.subscriptionEpoch() !== epoch) {
    stream.end("reconnect");
    return false;
  }
  stream.live();
  return true;
}

/**
 * Answers an event stream. Its catch-up is written before the answer, so
 * that a stream that could not go live is answered 503 instead of 200:
 * the reader is told to come back (`Retry-After`). `reader`, the user its token names, is online while
 * it is open. Its places under the caps are held until `info` says the
 * connection is done with: a stream cut by its bound may leave the
 * connection open for as long as its client keeps it.
 */
async function openEventStream(
  route: StreamRoute,
  req: Request,
  info: ConnectionInfo | undefined,
  client: string,
  reader: string | undefined,
): Promise<Response> {
  const { stream, epoch } = openOn(
    route,
    client,
    (gone, share) => new SseTransport(gone, share),
    info?.completed,
    "events",
  );
  stream.reader = reader;
  if (!(await catchUpThenLive(route, lastEventId(req), stream, epoch))) {
    throw stream.endedFor === "overflow" ? READERS_BEHIND : NOT_FOLLOWING;
  }
  if (reader !== undefined && route.presence !== undefined) {
    stream.whenEnded(route.presence.streamOpened(reader));
  }
  return new Response(stream.transport.body, { headers: STREAM_HEADERS });
}

/** Whether `req` asks for a WebSocket. */
function isWebSocketUpgrade(req: Request): boolean {
  return req.headers.get("upgrade")?.toLowerCase() === "websocket";
}

/** The token of a token frame (`{"token": "..."}` and nothing else), or `undefined`. */
function tokenOfFrame(data: unknown): string | undefined {
  if (typeof data !== "string") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return undefined;
  }
  const keys = Object.keys(value);
  const token = (value as { token?: unknown }).token;
  return keys.length === 1 && typeof token === "string" ? token : undefined;
}

/**
 * Reads what the client sends on `stream`'s socket: at most one first
 * frame, a token (unless the upgrade already carried
 * `X-Messaging-Token`), which on the message stream makes its user online
 * while the socket is open. A token that does not authenticate closes the
 * socket with 1008; any other frame (binary, a second token, other JSON,
 * not JSON) with 1003.
 */
function readClientFrames(
  route: StreamRoute,
  stream: EventStream<WebSocketTransport>,
  client: string,
  authenticated: boolean,
): void {
  let tokenAllowed = !authenticated;
  stream.transport.socket.addEventListener("message", async ({ data }) => {
    const token = tokenAllowed ? tokenOfFrame(data) : undefined;
    tokenAllowed = false;
    if (token === undefined) return stream.end("bad-frame");
    // The name is text already (a frame is UTF-8), not a header's bytes.
    const credential = splitCredential(token);
    let user = null;
    try {
      user = await route.auth.check(credential, client);
    } catch (error) {
      // Guessed too often, or the store did not answer: the reader may
      // retry on a new socket, later.
      return stream.end(
        error instanceof HttpError && error.status === 429
          ? "auth-failures"
          : "fault",
      );
    }
    if (user === null) return stream.end("bad-token");
    stream.reader = user.name;
    if (stream.open && route.presence !== undefined) {
      stream.whenEnded(route.presence.streamOpened(user.name));
    }
  });
}

/**
 * A socket's idle timeout: Deno pings after half of it without a frame from
 * the client, and closes the socket when no pong came within the other
 * half. Each socket draws its own, up to a quarter longer, so sockets that
 * connected together are not pinged together ever after (12,500 pings at
 * once stalled a process for 1.2-2.4 s at 50,000 followers).
 */
export function idleTimeoutSeconds(
  heartbeatMs: number,
  random: () => number = Math.random,
): number {
  return (2 * heartbeatMs * (1 + random() / 4)) / 1000;
}

/**
 * `first`, then `second`. Made apart from `openWebSocket` so that a socket's
 * listener, which lives as long as the socket, does not hold that scope (the
 * request, its headers, the upgrade's response).
 */
function both(first: () => void, second: () => void): () => void {
  return () => {
    first();
    second();
  };
}

/**
 * Answers a WebSocket upgrade. Every refusal (origin, not following, caps)
 * is answered before the upgrade; once upgraded the answer is sent at once
 * and the catch-up goes out as the socket opens. A socket that cannot go
 * live is closed with the code that says why, and its reader reconnects.
 * Its places under the caps are held until the socket is closed for good:
 * Deno keeps the connection of a socket the server closed until the
 * client answers the close.
 */
function openWebSocket(
  route: StreamRoute,
  req: Request,
  client: string,
  reader: string | undefined,
): Response {
  // Read now: the upgrade closes the request, and its headers with it.
  const after = lastEventId(req);
  let response: Response | undefined;
  const closed = Promise.withResolvers<void>();
  const { stream, epoch } = openOn(
    route,
    client,
    (gone, share) => {
      let upgrade: Deno.WebSocketUpgrade;
      try {
        upgrade = Deno.upgradeWebSocket(req, {
          idleTimeout: idleTimeoutSeconds(route.hub.heartbeatMs),
        });
      } catch (error) {
        throw refusalError(REFUSALS.notUpgrade, {
          reason: (error as Error).message,
        });
      }
      response = upgrade.response;
      // The transport's listener tells both: its stream, and the caps.
      return new WebSocketTransport(
        upgrade.socket,
        both(gone, closed.resolve),
        share,
      );
    },
    closed.promise,
    "websocket",
  );
  stream.reader = reader;
  readClientFrames(route, stream, client, reader !== undefined);
  catchUpThenLive(route, after, stream, epoch).then((live) => {
    if (live && reader !== undefined && route.presence !== undefined) {
      stream.whenEnded(route.presence.streamOpened(reader));
    }
  }, () => {
    // Ended with 1011 already; the store's own log tells of its failures.
  });
  return response!;
}

/**
 * Who a stream is read by: the user its `X-Messaging-Token` names, or
 * `undefined` without the header. A header that does not authenticate is
 * refused (401), as on every other route, rather than opened anonymously:
 * its reader would believe itself online when it is not.
 */
async function readerOf(
  req: Request,
  info: ConnectionInfo | undefined,
  auth: Authenticator,
): Promise<string | undefined> {
  // `get`, not `has`: Deno answers `get` alone, where `has` copies every
  // header into the request, held as long as a WebSocket (1.1 KB each).
  if (req.headers.get(TOKEN_HEADER) === null) return undefined;
  const user = await auth.authenticate(req, info);
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

/** The methods of a stream route: `GET` on either transport, and `HEAD`. */
function streamMethods(route: StreamRoute): Partial<Record<Method, Handler>> {
  return {
    GET: async (req: Request, info?: ConnectionInfo) => {
      const webSocket = isWebSocketUpgrade(req);
      if (webSocket && !route.webSockets) throw WEBSOCKET_OFF;
      // A foreign page is refused before anything else is looked at.
      if (webSocket && !route.originOf(req)) throw new HttpError(403);
      const reader = route.presence === undefined
        ? undefined
        : await readerOf(req, info, route.auth);
      const client = route.clientOf(req, info);
      return webSocket
        ? openWebSocket(route, req, client, reader)
        : openEventStream(route, req, info, client, reader);
    },
    HEAD: head,
  };
}

/** Delivers `event` to every reader of `topic`: one event object, encoded once per transport. */
function deliverAll(hub: StreamHub, topic: string, event: () => StreamEvent) {
  let made: StreamEvent | undefined;
  for (const stream of hub.readers(topic)) stream.deliver(made ??= event());
}

/** Options both stream routes take. */
export interface StreamRouteOptions {
  /** Who the client is, for the per-client cap. */
  clientOf: ClientAddressOf;
  /** Checks the tokens readers send, guessing limited. */
  auth: Authenticator;
  /** Whether a browser's upgrade comes from an origin that may read the stream. */
  originOf: OriginCheck;
  /** Whether an upgrade opens a WebSocket; when not, it is refused (400). */
  webSockets: boolean;
}

/**
 * The route of `GET /events`: the newest messages (or those after
 * `Last-Event-ID` or `?lastEventId=`), then each new one, and every
 * change of presence. A stream opened with `X-Messaging-Token`, or a
 * WebSocket that sent its token, makes its user online while it is open.
 */
export function messageEventsRoute(
  store: MessageLog & ChangeFeed & PresenceBoard,
  hub: StreamHub,
  options: StreamRouteOptions,
): Partial<Record<Method, Handler>> {
  const messages = new MessageChunks();
  hub.feed("messages", () =>
    store.subscribe((event) => {
      if (event.kind === "message") {
        deliverAll(
          hub,
          "messages",
          () => messages.event(event.id, event.json),
        );
      } else if (event.kind === "presence" || event.kind === "unregistered") {
        // No id: presence is no message, and a catch-up does not replay it.
        deliverAll(
          hub,
          "messages",
          () => new StreamEvent("presence", presenceData(event)),
        );
        // Its own streams hear it too, then end: the name may be taken anew.
        if (event.kind === "unregistered") {
          hub.endReader("messages", event.name, "unregistered");
        }
      } else if (event.kind === "reset") hub.endAll("messages");
    }));
  return streamMethods({
    store,
    hub,
    topic: "messages",
    ...options,
    presence: presenceTrackerOf(store),
    async catchUp(after, stream) {
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
          new StreamEvent("gap", JSON.stringify({ missed: recent.missed })),
        );
      }
      for (const { id, json } of recent.messages) {
        stream.write(messages.event(id, json));
      }
      // Everything up to the newest id is accounted for: sent, or older
      // than what a reader without an id gets.
      stream.lastId = recent.newestId;
    },
  });
}

/** The route of `GET /quote/events`: the current quote, then each replacement. */
export function quoteEventsRoute(
  store: QuoteCell & ChangeFeed,
  hub: StreamHub,
  options: StreamRouteOptions,
): Partial<Record<Method, Handler>> {
  hub.feed("quote", () =>
    store.subscribe((event) => {
      if (event.kind === "quote") {
        deliverAll(
          hub,
          "quote",
          () => new StreamEvent("quote", JSON.stringify(event.quote)),
        );
      } else if (event.kind === "reset") hub.endAll("quote");
    }));
  return streamMethods({
    store,
    hub,
    topic: "quote",
    ...options,
    async catchUp(_req, stream) {
      const quote = await store.getQuote();
      stream.write(new StreamEvent("quote", JSON.stringify(quote)));
    },
  });
}
