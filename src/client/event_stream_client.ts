/**
 * Following an event stream over a WebSocket or as server-sent events,
 * reconnecting after the last id seen whenever waiting can fix the cause.
 * @module
 */

import { createParser } from "eventsource-parser";
import { headerValue } from "./header_value.js";
import { ServiceError, serviceErrorOf } from "./service_error.ts";
import { CLOSE_CODES } from "../http/catalogue.ts";
import { sleep } from "../timers/sleep.ts";

/** The credential header for `token`, as UTF-8 bytes; none without one. */
export function tokenHeaders(
  token: string | undefined,
): Record<string, string> {
  return token === undefined ? {} : { "x-messaging-token": headerValue(token) };
}

/**
 * How a client follows a stream.
 *
 * @example Resuming after a message, until a signal ends it
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler } from "@lms/light-messaging";
 * import { type FollowOptions, MessagingClient } from "@lms/light-messaging/client";
 * await using server = Deno.serve(
 *   { hostname: "127.0.0.1", port: 0, onListen() {} },
 *   createHandler(),
 * );
 * const chat = new MessagingClient(`http://127.0.0.1:${server.addr.port}/`);
 * await chat.register("ann");
 * for (const text of ["One", "Two", "Three"]) await chat.post(text);
 * const stop = new AbortController();
 * const options: FollowOptions = { lastEventId: 1, signal: stop.signal };
 * const texts: string[] = [];
 * for await (const event of chat.events(options)) {
 *   if (event.type === "message") texts.push(event.message.text);
 *   if (texts.length === 2) stop.abort(); // ends the iteration
 * }
 * assert.deepEqual(texts, ["Two", "Three"]);
 * ```
 *
 * @example The same stream as server-sent events
 * ```ts
 * import type { FollowOptions } from "@lms/light-messaging/client";
 * const options: FollowOptions = { transport: "sse" };
 * ```
 */
export interface FollowOptions {
  /** Ends the iteration (and the connection) when aborted. */
  signal?: AbortSignal;
  /** Told each time a connection is accepted, before its first event. */
  onOpen?: () => void;
  /** Told when the stream was lost, before each reconnection. */
  onReconnect?: (reason: unknown) => void;
  /** Resume after this message id, as a reconnecting reader does. */
  lastEventId?: number;
  /** Default: a WebSocket where the runtime has one, switching for good to SSE where none opens. */
  transport?: "websocket" | "sse";
  /**
   * Over SSE, a stream that sends nothing, not even a heartbeat, for this
   * long (or whose answer does not come) is taken for lost and resumed (a
   * socket's pings are not seen).
   * Default 45,000 (3 × the server's default `--heartbeat-ms`); 0 or less,
   * or `Infinity`: never.
   */
  idleMs?: number;
}

/** Where and as whom a stream is followed. */
export interface StreamSource {
  fetch: typeof fetch;
  /** The stream's `http:` or `https:` URL. */
  url: URL;
  /** Asked on every connection: the token may change meanwhile. */
  token: () => string | undefined;
}

/** Until the server says otherwise (`retry:`). */
const RETRY_MS = 1000;
/** The delay doubles up to 32 × the retry delay. */
const MAX_DOUBLINGS = 5;
/** How long a socket this client closes may take to say so. */
const CLOSE_WAIT_MS = 1000;
const IDLE_MS = 45_000;

/**
 * The retry delay doubled per connection that delivered nothing, or a refusal's
 * `Retry-After`; stretched at random up to 2× so readers dropped together do
 * not return at once. The scale bench's followers wait the same.
 */
export function reconnectDelay(
  failures: number,
  retryMs = RETRY_MS,
  retryAfterSeconds?: number,
): number {
  const doublings = Math.min(Math.max(failures - 1, 0), MAX_DOUBLINGS);
  const base = retryAfterSeconds === undefined
    ? retryMs * 2 ** doublings
    : Math.max(retryAfterSeconds * 1000, retryMs);
  return base * (1 + Math.random());
}

/** A socket that closed before it opened: no upgrade, or no server. */
class SocketNotOpened extends Error {}

/** One event as a follower yields it, whichever transport carried it. */
export interface StreamMessage {
  event?: string;
  id?: string;
  /** The event's data as text: JSON, for this service's events. */
  readonly data: string;
  /** The data parsed. */
  value(): unknown;
}

/** What one connection reports back to the loop that reconnects. */
interface Connection {
  lastEventId: string | undefined;
  retryMs?: number;
  /** An event came: the connection worked, so backing off starts over. */
  delivered: boolean;
  opened: boolean;
  accepted(): void;
}

/** Reads one server-sent event stream; a refusal throws a {@linkcode ServiceError}. */
async function* sseConnection(
  source: StreamSource,
  connection: Connection,
  signal: AbortSignal | undefined,
  idleMs = IDLE_MS,
): AsyncGenerator<StreamMessage> {
  const headers = tokenHeaders(source.token());
  if (connection.lastEventId !== undefined) {
    headers["last-event-id"] = connection.lastEventId;
  }
  // A stopped or cut-off server may accept, then say nothing for good: the
  // watch covers the answer's headers as well as each read.
  const ended = new AbortController();
  const end = () => ended.abort();
  signal?.addEventListener("abort", end, { once: true });
  let reader: ReadableStreamDefaultReader<string> | undefined;
  // Not left to fetch: under Deno 2.9.6 some of fifty aborted bodies went on
  // reading for good while messages flowed.
  const stop = () => void reader?.cancel().catch(() => {});
  ended.signal.addEventListener("abort", stop, { once: true });
  let silent = false;
  let idle: ReturnType<typeof setTimeout> | undefined;
  const watch = () => {
    // Past 2^31 - 1 ms a timer fires at once: a watch that long is none.
    if (idleMs > 0 && idleMs < 2 ** 31) {
      idle = setTimeout(() => {
        silent = true;
        end();
      }, idleMs);
    }
  };
  const silence = () => new Error(`the stream sent nothing for ${idleMs} ms`);
  try {
    watch();
    const res = await source.fetch(source.url, {
      headers,
      signal: ended.signal,
    }).catch((error) => {
      throw silent ? silence() : error;
    });
    if (!res.ok || res.body === null) throw await serviceErrorOf(res);
    clearTimeout(idle);
    connection.accepted();
    const queue: StreamMessage[] = [];
    const parser = createParser({
      onEvent: ({ event, id, data }) =>
        queue.push({ event, id, data, value: () => JSON.parse(data) }),
      onRetry: (ms) => connection.retryMs = ms,
    });
    reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      watch();
      const { done, value } = await reader.read();
      clearTimeout(idle);
      if (silent) throw silence();
      if (done || signal?.aborted) return;
      parser.feed(value);
      for (let event; (event = queue.shift());) yield event;
    }
  } finally {
    clearTimeout(idle);
    signal?.removeEventListener("abort", end);
    stop();
  }
}

/** A frame as an event, its data parsed already. */
function eventOfFrame(data: unknown): StreamMessage | undefined {
  if (typeof data !== "string") return undefined;
  let frame: { event?: unknown; id?: unknown; data?: unknown } | null;
  try {
    frame = JSON.parse(data);
  } catch {
    return undefined;
  }
  const { event, id, data: value } = frame ?? {};
  if (typeof event !== "string") return undefined;
  return {
    event,
    id: typeof id === "number" ? String(id) : undefined,
    // The clients take the value: text only for whoever asks.
    get data() {
      return JSON.stringify(value);
    },
    value: () => value,
  };
}

/** 1008 (a bad token: the 401 a request would get) or 1003 (a refused frame) is the client's to fix. */
function closeError(event: CloseEvent): Error {
  const said = `${event.code}${event.reason ? `: ${event.reason}` : ""}`;
  const closed = `the socket was closed with ${said}`;
  if (event.code === CLOSE_CODES["bad-token"].code) {
    return new ServiceError(401, { message: `Unauthorized (${closed})` });
  }
  if (event.code === CLOSE_CODES["bad-frame"].code) {
    const message = `The service refused a frame (${closed})`;
    return new ServiceError(400, { message });
  }
  return new Error(`the socket closed with ${said}`);
}

/** Reads one WebSocket: `?lastEventId=` in the URL (a socket sends no such header), token frame first. */
async function* socketConnection(
  source: StreamSource,
  connection: Connection,
  signal: AbortSignal | undefined,
): AsyncGenerator<StreamMessage> {
  const url = new URL(source.url);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  if (connection.lastEventId !== undefined) {
    url.searchParams.set("lastEventId", connection.lastEventId);
  }
  const socket = new WebSocket(url);
  const queue: StreamMessage[] = [];
  let closed: CloseEvent | undefined;
  let wake = () => {};
  socket.addEventListener("open", () => {
    const token = source.token();
    if (token !== undefined) socket.send(JSON.stringify({ token }));
    // After the token frame, so who is online is asked after it is heard.
    connection.accepted();
  });
  socket.addEventListener("message", ({ data }) => {
    const event = eventOfFrame(data);
    if (event !== undefined) queue.push(event);
    wake();
  });
  socket.addEventListener("close", (event) => {
    closed = event;
    wake();
  });
  const onAbort = () => wake();
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      for (let event; (event = queue.shift());) yield event;
      // The reader may have aborted while it was yielded to.
      if (closed !== undefined || signal?.aborted) break;
      await new Promise<void>((resolve) => wake = resolve);
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    if (closed === undefined) {
      const gone = new AbortController();
      socket.addEventListener("close", () => gone.abort(), { once: true });
      socket.close(1000);
      // Awaited, so a server shut down next finds no socket open.
      await sleep(CLOSE_WAIT_MS, gone.signal);
    }
  }
  if (signal?.aborted) return;
  if (!connection.opened) {
    throw new SocketNotOpened("the socket could not be opened");
  }
  throw closeError(closed!);
}

/**
 * The events at `source.url` until `options.signal` aborts. What waiting cannot
 * fix (a 4xx, a close with 1003 or 1008) throws a {@linkcode ServiceError}.
 */
export async function* followEventStream(
  source: StreamSource,
  options: FollowOptions = {},
): AsyncGenerator<StreamMessage> {
  const { signal, idleMs } = options;
  const hasWebSocket = typeof globalThis.WebSocket === "function";
  let transport = options.transport ?? (hasWebSocket ? "websocket" : "sse");
  const mayFallBack = options.transport === undefined && hasWebSocket;
  const state: Connection = {
    lastEventId: options.lastEventId?.toString(),
    delivered: false,
    opened: false,
    accepted() {
      state.opened = true;
      options.onOpen?.();
    },
  };
  async function* tracked(
    events: AsyncGenerator<StreamMessage>,
    onFirst = () => {},
  ) {
    for await (const event of events) {
      if (!state.delivered) onFirst();
      if (event.id !== undefined) state.lastEventId = event.id;
      state.delivered = true;
      yield event;
    }
  }
  let failures = 0;
  while (!signal?.aborted) {
    let reason: unknown = new Error("the stream ended");
    state.delivered = false;
    state.opened = false;
    try {
      try {
        yield* tracked(
          transport === "sse"
            ? sseConnection(source, state, signal, idleMs)
            : socketConnection(source, state, signal),
        );
      } catch (error) {
        if (!(error instanceof SocketNotOpened && mayFallBack)) throw error;
        // No socket: the same stream as server-sent events, kept once it delivers an event.
        yield* tracked(sseConnection(source, state, signal, idleMs), () => {
          transport = "sse";
        });
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof ServiceError && error.status < 500) throw error;
      reason = error;
    }
    if (signal?.aborted) return;
    failures = state.delivered ? 0 : failures + 1;
    options.onReconnect?.(reason);
    const told = reason instanceof ServiceError
      ? reason.retryAfterSeconds
      : undefined;
    await sleep(reconnectDelay(failures, state.retryMs, told), signal);
  }
}
