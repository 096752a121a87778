/**
 * `GET /events` and `GET /quote/events`, as server-sent events or a WebSocket, over one hub.
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
} from "../store/store.ts";
import { splitCredential, TOKEN_HEADER } from "../auth/auth.ts";
import type { Authenticator } from "../auth/guesses.ts";
import { PRESENCE_PACE_MS, PresencePacing } from "./presence_pacing.ts";
import {
  type PresenceTracker,
  presenceTrackerOf,
} from "../presence/presence_tracker.ts";
import {
  EVENT_STREAM_CONTENT_TYPE,
  MessageChunks,
  StreamEvent,
} from "./event_stream_format.ts";
import type {
  EventStream,
  StreamHub,
  StreamKind,
  StreamRefusal,
} from "./stream_hub.ts";
import type { ClientAddressOf } from "../http/client_address.ts";
import { SseTransport } from "./sse_transport.ts";
import type { Transport, TransportFactory } from "./transport.ts";
import { WebSocketTransport } from "./websocket_transport.ts";
import type { OriginCheck } from "../http/origin.ts";

const STREAM_HEADERS = {
  "content-type": EVENT_STREAM_CONTENT_TYPE,
  "cache-control": "no-cache",
};

/** How many messages `GET /` answers, and a catch-up without an id sends. */
export const NEWEST_COUNT = 5;

/** `Last-Event-ID`, else `?lastEventId=` (browsers' first try, WebSockets); the header wins even when unusable. */
export function lastEventId(req: Request): number | undefined {
  const value = req.headers.get("last-event-id") ??
    new URL(req.url).searchParams.get("lastEventId");
  // Past 15 digits it is above any id a store gives, so absent.
  const digits = value?.match(/^0*(\d{1,15})$/)?.[1];
  return digits === undefined ? undefined : Number(digits);
}

/** Readers may come back in a second: on a shared port another process may have room. */
const RETRY_SOON = { "retry-after": "1" };
const READERS_BEHIND = refusalError(REFUSALS.readersBehind, {}, RETRY_SOON);

/** The longest wait asked while the store cannot follow: the clients' own longest doubling. */
const DEAF_RETRY_MAX_S = 32;
/** A pause in such refusals this long means the last outage is over. */
const DEAF_GAP_MS = 2 * DEAF_RETRY_MAX_S * 1000;

/**
 * Each refusal while the store cannot follow asks a wait as long as such refusals have lasted,
 * so readers back off through an outage (docs/api.md, "Cannot follow"); a new loss starts anew.
 */
export class NotFollowing {
  #since = 0;
  #last = -Infinity;
  /** Listening for the next loss (`reset`) only while refusing, so an unused route holds nothing. */
  #stop: (() => void) | undefined;

  constructor(private readonly feed: Pick<ChangeFeed, "subscribe">) {}

  refusal(now: number = performance.now()): HttpError {
    if (now - this.#last > DEAF_GAP_MS) this.#since = now;
    this.#last = now;
    this.#stop ??= this.feed.subscribe((event) => {
      if (event.kind === "reset") this.following();
    });
    const waited = Math.ceil((now - this.#since) / 1000);
    const seconds = Math.min(DEAF_RETRY_MAX_S, Math.max(1, waited));
    return refusalError(REFUSALS.notFollowing, {}, {
      "retry-after": String(seconds),
    });
  }

  following(): void {
    this.#last = -Infinity;
    this.#stop?.();
    this.#stop = undefined;
  }
}

/** A place frees only when a reader leaves, which no clock tells. */
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

/** The kernel places a retry on a process of the port at random (docs/operating.md). */
const SHARED_PORT_REFUSALS = {
  ...CAP_REFUSALS,
  // Closed, or a client that keeps its connection asks this process again.
  full: refusalError(REFUSALS.streamsFull, {}, {
    ...RETRY_SOON,
    connection: "close",
  }),
};

const WEBSOCKET_OFF = refusalError(REFUSALS.webSocketsOff);
/** `Upgrade` is a list (RFC 9110), and Deno upgrades wherever `websocket` is in it. */
const WEBSOCKET_UPGRADE = /(?:^|,)\s*websocket\s*(?:,|$)/i;

export interface StreamRouteOptions {
  /** For the per-client cap. */
  clientOf: ClientAddressOf;
  auth: Authenticator;
  originOf: OriginCheck;
  webSockets: boolean;
  /** Whether other processes take connections on this port (`--reuse-port`). */
  sharedPort: boolean;
}

/** What both transports of one route share. */
interface StreamRoute extends StreamRouteOptions {
  store: ChangeFeed;
  hub: StreamHub;
  topic: string;
  /** Writes a new stream's first events; `after`: the reader's resume id. */
  catchUp: (after: number | undefined, stream: EventStream) => Promise<void>;
  /** Only where presence is told (messages). */
  presence?: PresenceTracker;
  notFollowing: NotFollowing;
}

function openOn<T extends Transport>(
  route: StreamRoute,
  client: string,
  transport: TransportFactory<T>,
  connection: Promise<unknown> | undefined,
  kind: StreamKind,
): { stream: EventStream<T>; epoch: number } {
  const { hub, topic } = route;
  const epoch = following(route);
  route.notFollowing.following();
  const stream = hub.open(topic, client, transport, connection, kind);
  if (typeof stream === "string") throw capRefusal(route, stream);
  return { stream, epoch };
}

/** The subscription's epoch; refused while there is none, before the store is read (a read may fail with less to say). */
function following(route: StreamRoute): number {
  const epoch = route.store.subscriptionEpoch();
  if (epoch === undefined) throw route.notFollowing.refusal();
  return epoch;
}

function capRefusal(route: StreamRoute, refused: StreamRefusal): HttpError {
  return (route.sharedPort ? SHARED_PORT_REFUSALS : CAP_REFUSALS)[refused];
}

/** Live unless the store lost its subscription during the catch-up; answers whether it is, as going live may cut it. */
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
    // Most likely cut by what cut the subscription: say so.
    throw route.store.subscriptionEpoch() === epoch
      ? error
      : route.notFollowing.refusal();
  }
  if (!stream.open || route.store.subscriptionEpoch() !== epoch) {
    stream.end("reconnect");
    return false;
  }
  stream.live();
  return stream.open;
}

/** `reader` is online while `stream` is open, and not at all once it ended. */
function onlineWhileOpen(
  route: StreamRoute,
  stream: EventStream,
  reader: string | undefined,
): void {
  if (reader !== undefined && stream.open && route.presence !== undefined) {
    stream.whenEnded(route.presence.streamOpened(reader));
  }
}

/** Caught up before it is answered: a stream that cannot go live is 503, not 200. */
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
    throw stream.endedFor === "overflow"
      ? READERS_BEHIND
      : route.notFollowing.refusal();
  }
  onlineWhileOpen(route, stream, reader);
  return new Response(stream.transport.body, { headers: STREAM_HEADERS });
}

function tokenOfFrame(data: unknown): string | undefined {
  if (typeof data !== "string") return undefined;
  try {
    const value = JSON.parse(data);
    const token = value?.token;
    return typeof token === "string" && Object.keys(value).length === 1
      ? token
      : undefined;
  } catch {
    return undefined;
  }
}

/** One first frame, a token, unless the upgrade had one: a bad token closes 1008, any other frame 1003. */
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
    const credential = splitCredential(token);
    let user = null;
    try {
      user = await route.auth.check(credential, client);
    } catch (error) {
      // Guessed too often, or the store did not answer: retry later.
      return stream.end(
        error instanceof HttpError && error.status === 429
          ? "auth-failures"
          : "fault",
      );
    }
    if (user === null) return stream.end("bad-token");
    stream.reader = user.name;
    onlineWhileOpen(route, stream, user.name);
  });
}

/** Few enough that the sockets on one keep being pinged in one turn of the event loop. */
const IDLE_STEPS = 16;

/** Twice the heartbeat, up to a quarter more in one of a few steps: sockets opened together are pinged apart. */
export function idleTimeoutSeconds(
  heartbeatMs: number,
  random: () => number = Math.random,
): number {
  const step = Math.floor(random() * IDLE_STEPS) / IDLE_STEPS;
  return (2 * Math.round(heartbeatMs * (1 + step / 4))) / 1000;
}

/**
 * A socket not open after this many idle timeouts is given up: some open over a minute late on a
 * saturated host (scale_storms.md, run 11), one whose client reset the handshake never does.
 */
const OPEN_WITHIN_IDLE_TIMEOUTS = 4;

/** Made apart from `openWebSocket`, so a socket's listener does not hold its request and headers. */
function both(first: () => void, second: () => void): () => void {
  return () => {
    first();
    second();
  };
}

/** Settles when Deno opens `socket`: one it never opens (architecture.md) must not make its reader online. */
function opened(socket: WebSocket): Promise<void> {
  if (socket.readyState !== WebSocket.CONNECTING) return Promise.resolve();
  return new Promise((resolve) =>
    socket.addEventListener("open", () => resolve(), { once: true })
  );
}

/** Every refusal comes before the upgrade; the catch-up goes out as the socket opens. */
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
      const idleTimeout = idleTimeoutSeconds(route.hub.heartbeatMs);
      try {
        upgrade = Deno.upgradeWebSocket(req, { idleTimeout });
      } catch (error) {
        throw refusalError(REFUSALS.notUpgrade, {
          reason: (error as Error).message,
        });
      }
      response = upgrade.response;
      return new WebSocketTransport(
        upgrade.socket,
        both(gone, closed.resolve),
        share,
        OPEN_WITHIN_IDLE_TIMEOUTS * idleTimeout * 1000,
      );
    },
    closed.promise,
    "websocket",
  );
  stream.reader = reader;
  readClientFrames(route, stream, client, reader !== undefined);
  catchUpThenLive(route, after, stream, epoch).then(() =>
    opened(stream.transport.socket)
  ).then(() => {
    onlineWhileOpen(route, stream, reader);
  }, () => {
    // Ended with 1011 already; the store's own log tells of its failures.
  });
  return response!;
}

/** A token that does not authenticate is refused (401), not read anonymously. */
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

/** The status `GET` would answer now; an empty body, so that Deno adds no `content-length: 0`. */
async function head(
  route: StreamRoute,
  req: Request,
  info: ConnectionInfo | undefined,
): Promise<Response> {
  following(route);
  if (route.presence !== undefined) await readerOf(req, info, route.auth);
  const refused = route.hub.refusal(route.clientOf(req, info), "events");
  if (refused !== undefined) throw capRefusal(route, refused);
  return new Response(new ReadableStream({ start: (c) => c.close() }), {
    headers: STREAM_HEADERS,
  });
}

function streamMethods(
  parts: Omit<StreamRoute, "notFollowing">,
): Partial<Record<Method, Handler>> {
  const route = { ...parts, notFollowing: new NotFollowing(parts.store) };
  return {
    GET: async (req: Request, info?: ConnectionInfo) => {
      const webSocket = WEBSOCKET_UPGRADE.test(
        req.headers.get("upgrade") ?? "",
      );
      if (webSocket && !route.webSockets) throw WEBSOCKET_OFF;
      if (webSocket && !route.originOf(req)) throw new HttpError(403);
      following(route);
      const reader = route.presence === undefined
        ? undefined
        : await readerOf(req, info, route.auth);
      const client = route.clientOf(req, info);
      return webSocket
        ? openWebSocket(route, req, client, reader)
        : openEventStream(route, req, info, client, reader);
    },
    HEAD: (req: Request, info?: ConnectionInfo) => head(route, req, info),
  };
}

/** `GET /events`: the newest messages or those after the reader's id, then each new one and every change of presence. */
export function messageEventsRoute(
  store: MessageLog & ChangeFeed & PresenceBoard,
  hub: StreamHub,
  options: StreamRouteOptions,
): Partial<Record<Method, Handler>> {
  const messages = new MessageChunks();
  hub.feed("messages", () => {
    // No id: a catch-up does not replay presence.
    const presence = (data: object) => () =>
      new StreamEvent("presence", JSON.stringify(data));
    const pacing = new PresencePacing(
      PRESENCE_PACE_MS,
      (name, online) => hub.deliver("messages", presence({ name, online })),
    );
    const stop = store.subscribe((event) => {
      if (event.kind === "message") {
        hub.deliver("messages", () => messages.event(event.id, event.json));
      } else if (event.kind === "presence") {
        pacing.change(event.name, event.online);
      } else if (event.kind === "unregistered") {
        pacing.forget(event.name);
        hub.deliver(
          "messages",
          presence({ name: event.name, registered: false }),
        );
        // Then its streams end: the name may be taken anew.
        hub.endReader("messages", event.name, "unregistered");
      } else if (event.kind === "reset") {
        hub.endAll("messages");
      }
    });
    return () => {
      stop();
      pacing.close();
    };
  });
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
      if (after !== undefined && after > recent.newestId) {
        // The store started afresh: the reader's id means nothing here.
        recent = await store.recentMessages(0, NEWEST_COUNT);
        after = undefined;
      }
      if (after !== undefined && recent.missed > 0) {
        stream.write(
          new StreamEvent("gap", JSON.stringify({ missed: recent.missed })),
        );
      }
      for (const { id, json } of recent.messages) {
        stream.write(messages.event(id, json));
      }
      // Older ones are what a reader without an id does not get.
      stream.lastId = recent.newestId;
    },
  });
}

/** `GET /quote/events`: the current quote, then each replacement. */
export function quoteEventsRoute(
  store: QuoteCell & ChangeFeed,
  hub: StreamHub,
  options: StreamRouteOptions,
): Partial<Record<Method, Handler>> {
  hub.feed("quote", () =>
    store.subscribe((event) => {
      if (event.kind === "quote") {
        hub.deliver("quote", () =>
          new StreamEvent("quote", JSON.stringify(event.quote)));
      } else if (event.kind === "reset") {
        hub.endAll("quote");
      }
    }));
  return streamMethods({
    store,
    hub,
    topic: "quote",
    ...options,
    async catchUp(_after, stream) {
      const quote = await store.getQuote();
      stream.write(new StreamEvent("quote", JSON.stringify(quote)));
    },
  });
}
