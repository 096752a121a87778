/**
 * Typed clients of both services over `fetch`, one method per endpoint; the
 * package's `./client` entry (the main entry exports the same).
 * @module
 */

import {
  followEventStream,
  type FollowOptions,
  tokenHeaders,
} from "./event_stream_client.ts";
import { ServiceError, serviceErrorOf } from "./service_error.ts";

export { ServiceError };
export type { FollowOptions };

export type { ErrorEntry, ErrorLocation } from "../http/response.ts";

/**
 * A message as `GET /` answers it: the posted fields, with `color` and `user` always set.
 *
 * @example A message with a field of the poster's own
 * ```ts
 * import type { Message } from "@lms/light-messaging/client";
 * const message: Message = { text: "Hi", color: "red", user: "ann", mood: "glad" };
 * ```
 */
export interface Message {
  /** What was said. */
  text: string;
  /** The color it is shown in. */
  color: "red" | "black";
  /** Who posted it. */
  user: string;
  /** Any other field the poster sent, kept as sent. */
  [field: string]: unknown;
}

/**
 * One message of the history, with its id (the id of the event streams).
 *
 * @example The first message stored
 * ```ts
 * import type { HistoryMessage } from "@lms/light-messaging/client";
 * const first: HistoryMessage = {
 *   id: 1,
 *   message: { text: "Hi", color: "black", user: "ann" },
 * };
 * ```
 */
export interface HistoryMessage {
  /** Its place in the order of storing: 1, 2, 3, ... */
  id: number;
  /** The message as `GET /` shows it. */
  message: Message;
}

/**
 * One page of the history, as `GET /messages` answers it.
 *
 * @example A page with older ones below it
 * ```ts
 * import type { HistoryPage } from "@lms/light-messaging/client";
 * const page: HistoryPage = {
 *   messages: [{ id: 7, message: { text: "Hi", color: "black", user: "ann" } }],
 *   next: 7,
 * };
 * ```
 */
export interface HistoryPage {
  /** Newest first. */
  messages: HistoryMessage[];
  /** The `before` of the next older page, or `null` when the history holds nothing older. */
  next: number | null;
}

/**
 * Where {@linkcode MessagingClient.olderMessages} and
 * {@linkcode MessagingClient.history} start, and how much a page holds.
 *
 * @example The page before message 10, five messages long
 * ```ts
 * import type { HistoryOptions } from "@lms/light-messaging/client";
 * const options: HistoryOptions = { before: 10, limit: 5 };
 * ```
 */
export interface HistoryOptions {
  /** Only messages with an id below this one. Default: from the newest. */
  before?: number;
  /** At most this many messages a page: 1 to 100. Default 20. */
  limit?: number;
}

/**
 * What {@linkcode MessagingClient.events} yields: a message with its id, or
 * how many messages were missed because the history no longer held them.
 *
 * @example Showing an event
 * ```ts
 * import assert from "node:assert/strict";
 * import type { MessageStreamEvent } from "@lms/light-messaging/client";
 * const show = (event: MessageStreamEvent) =>
 *   event.type === "gap"
 *     ? `(${event.missed} missed)`
 *     : `${event.id} ${event.message.user}: ${event.message.text}`;
 * assert.equal(show({ type: "gap", missed: 3 }), "(3 missed)");
 * ```
 */
export type MessageStreamEvent =
  | { type: "message"; id: number; message: Message }
  | { type: "gap"; missed: number };

/**
 * A change of presence, as the stream's `presence` event carries it: a
 * user come online or gone offline, or a user unregistered.
 *
 * @example Saying what changed
 * ```ts
 * import assert from "node:assert/strict";
 * import type { PresenceChange } from "@lms/light-messaging/client";
 * const say = (change: PresenceChange) =>
 *   "registered" in change
 *     ? `${change.name} left`
 *     : `${change.name} is ${change.online ? "online" : "offline"}`;
 * assert.equal(say({ name: "ann", online: true }), "ann is online");
 * assert.equal(say({ name: "ann", registered: false }), "ann left");
 * ```
 */
export type PresenceChange =
  | { name: string; online: boolean }
  | { name: string; registered: false };

/**
 * How {@linkcode MessagingClient.events} follows the stream.
 *
 * @example Hearing who comes online
 * ```ts
 * import type { MessageFollowOptions } from "@lms/light-messaging/client";
 * const options: MessageFollowOptions = {
 *   onPresence: (change) => console.log(change.name),
 * };
 * ```
 */
export interface MessageFollowOptions extends FollowOptions {
  /** Each change of presence; not replayed on reconnecting (see {@linkcode MessagingClient.online}). */
  onPresence?: (change: PresenceChange) => void;
}

/**
 * Options of both clients.
 *
 * @example A client calling a handler, with no socket
 * ```ts
 * import assert from "node:assert/strict";
 * import { createQuoteService } from "@lms/light-messaging";
 * import { type ClientOptions, QuoteClient } from "@lms/light-messaging/client";
 * const service = createQuoteService();
 * const options: ClientOptions = {
 *   fetch: (input, init) => Promise.resolve(service(new Request(input, init))),
 * };
 * const quote = new QuoteClient("http://quote.test/", options);
 * await quote.set("Less is more.");
 * assert.equal(await quote.get(), "Less is more.");
 * ```
 */
export interface ClientOptions {
  /** The `fetch` to call. Default: the global one. */
  fetch?: typeof fetch;
}

/** The shared part of both clients: one request, one JSON answer or a {@linkcode ServiceError}. */
class JsonClient {
  readonly #base: URL;
  readonly #fetch: typeof fetch;

  constructor(baseUrl: string | URL, options: ClientOptions = {}) {
    // Without a trailing slash the base would lose its last segment.
    this.#base = new URL(baseUrl);
    if (!this.#base.pathname.endsWith("/")) this.#base.pathname += "/";
    // Bound: a browser's fetch called as a method of another object throws.
    this.#fetch = options.fetch ?? fetch.bind(globalThis);
  }

  follow(
    path: string,
    options?: FollowOptions,
    token: () => string | undefined = () => undefined,
  ) {
    return followEventStream(
      { fetch: this.#fetch, url: new URL(path, this.#base), token },
      options,
    );
  }

  async request<T>(
    method: string,
    path: string,
    init: { body?: string; token?: string } = {},
  ): Promise<T> {
    const res = await this.#fetch(new URL(path, this.#base), {
      method,
      headers: tokenHeaders(init.token),
      body: init.body,
    });
    if (!res.ok) throw await serviceErrorOf(res);
    const text = await res.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new ServiceError(res.status, { message: text || res.statusText });
    }
  }
}

/**
 * A client of the messaging service: register once, then act as that user.
 *
 * @example Joining, posting and leaving
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler } from "@lms/light-messaging";
 * import { MessagingClient } from "@lms/light-messaging/client";
 * await using server = Deno.serve(
 *   { hostname: "127.0.0.1", port: 0, onListen() {} },
 *   createHandler(),
 * );
 * const chat = new MessagingClient(`http://127.0.0.1:${server.addr.port}/`);
 * await chat.register("bob");
 * assert.equal(chat.name, "bob");
 * await chat.post("Hello", { color: "red" });
 * assert.deepEqual(await chat.users(), ["bob"]);
 * assert.equal(await chat.unregister(), "bob");
 * assert.equal(chat.token, undefined);
 * ```
 */
export class MessagingClient {
  /** The credential `register` returned, or one given to the constructor. */
  token: string | undefined;
  readonly #http: JsonClient;

  /** A client of the service at `baseUrl`, optionally already holding a `token`. */
  constructor(
    baseUrl: string | URL,
    options: ClientOptions & { token?: string } = {},
  ) {
    this.#http = new JsonClient(baseUrl, options);
    this.token = options.token;
  }

  /** The name the held token is for, or `undefined`. */
  get name(): string | undefined {
    const token = this.token;
    const dash = token?.indexOf("-") ?? -1;
    return dash === -1 ? undefined : token!.slice(0, dash);
  }

  #asUser<T>(method: string, path: string, body?: string): Promise<T> {
    const token = this.token;
    if (token === undefined) {
      throw new ServiceError(401, { message: "Not registered" });
    }
    return this.#http.request<T>(method, path, { body, token });
  }

  /** `POST /users`: registers `name` and keeps the token for later calls. */
  async register(name: string): Promise<string> {
    const { token } = await this.#http.request<{ token: string }>(
      "POST",
      "users",
      { body: name },
    );
    this.token = token;
    return token;
  }

  /** `GET /users`: every registered name, in registration order. */
  async users(): Promise<string[]> {
    return (await this.#asUser<{ users: string[] }>("GET", "users")).users;
  }

  /** `GET /users/online`: the names with an event stream open, in registration order. */
  async online(): Promise<string[]> {
    const path = "users/online";
    return (await this.#asUser<{ online: string[] }>("GET", path)).online;
  }

  /** `DELETE /users`: unregisters, forgets the token, and returns the name. */
  async unregister(): Promise<string> {
    const { Goodbye } = await this.#asUser<{ Goodbye: string }>(
      "DELETE",
      "users",
    );
    this.token = undefined;
    return Goodbye;
  }

  /** `POST /`: posts `text`, in `color` (default black), with any other fields. */
  async post(
    text: string,
    options: { color?: "red" | "black"; fields?: Record<string, unknown> } = {},
  ): Promise<void> {
    const message = { ...options.fields, text } as Record<string, unknown>;
    if (options.color !== undefined) message.color = options.color;
    await this.#asUser("POST", "", JSON.stringify(message));
  }

  /** `GET /`: the 5 newest messages, newest first. */
  async messages(): Promise<Message[]> {
    return await this.#http.request<Message[]>("GET", "");
  }

  /** `GET /messages`: one page of the history, newest first. */
  async olderMessages(options: HistoryOptions = {}): Promise<HistoryPage> {
    const query = new URLSearchParams();
    if (options.before !== undefined) query.set("before", `${options.before}`);
    if (options.limit !== undefined) query.set("limit", `${options.limit}`);
    const search = query.size === 0 ? "" : `?${query}`;
    return await this.#http.request<HistoryPage>("GET", `messages${search}`);
  }

  /**
   * The whole retained history, newest first, a page fetched only as the
   * loop asks for more. Messages posted meanwhile are not in it.
   *
   * @example Going back through everything
   * ```ts
   * import assert from "node:assert/strict";
   * import { createHandler } from "@lms/light-messaging";
   * import { MessagingClient } from "@lms/light-messaging/client";
   * await using server = Deno.serve(
   *   { hostname: "127.0.0.1", port: 0, onListen() {} },
   *   createHandler(),
   * );
   * const chat = new MessagingClient(`http://127.0.0.1:${server.addr.port}/`);
   * await chat.register("ann");
   * for (let i = 1; i <= 5; i++) await chat.post(`${i}`);
   * const all = await Array.fromAsync(chat.history({ limit: 2 }));
   * assert.deepEqual(all.map((m) => m.message.text), ["5", "4", "3", "2", "1"]);
   * ```
   */
  async *history(options: HistoryOptions = {}): AsyncGenerator<HistoryMessage> {
    let before: number | undefined | null = options.before;
    while (before !== null) {
      const page = await this.olderMessages({ before, limit: options.limit });
      yield* page.messages;
      before = page.next;
    }
  }

  /**
   * `GET /events`: the newest five (or every retained one after `lastEventId`),
   * then each new one, resuming on reconnecting. Followed as the token's user,
   * who is online meanwhile; a forgotten token ends it with a 401 {@linkcode ServiceError}.
   */
  async *events(
    options: MessageFollowOptions = {},
  ): AsyncGenerator<MessageStreamEvent> {
    const stream = this.#http.follow("events", options, () => this.token);
    for await (const { event, id, value } of stream) {
      if (event === "message") {
        yield { type: "message", id: Number(id), message: value() as Message };
      } else if (event === "gap") {
        yield { type: "gap", missed: (value() as { missed: number }).missed };
      } else if (event === "presence") {
        options.onPresence?.(value() as PresenceChange);
      }
    }
  }
}

/**
 * A client of the quote service.
 *
 * @example Reading and replacing the quote
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler } from "@lms/light-messaging";
 * import { QuoteClient, ServiceError } from "@lms/light-messaging/client";
 * await using server = Deno.serve(
 *   { hostname: "127.0.0.1", port: 0, onListen() {} },
 *   createHandler({ service: "quote" }),
 * );
 * const quote = new QuoteClient(`http://127.0.0.1:${server.addr.port}/`);
 * await quote.set("Less is more.");
 * assert.equal(await quote.get(), "Less is more.");
 * await assert.rejects(quote.set("no capital, no stop"), ServiceError);
 * assert.equal(await quote.get(), "Less is more.");
 * ```
 */
export class QuoteClient {
  readonly #http: JsonClient;

  /** A client of the service at `baseUrl`. */
  constructor(baseUrl: string | URL, options: ClientOptions = {}) {
    this.#http = new JsonClient(baseUrl, options);
  }

  /** `GET /quote`: the current quote. */
  async get(): Promise<string> {
    return await this.#http.request<string>("GET", "quote");
  }

  /** `POST /quote`: replaces the quote; a refused one throws with the failed checks. */
  async set(quote: string): Promise<void> {
    await this.#http.request<null>("POST", "quote", { body: quote });
  }

  /** `GET /quote/events`: the quote now, then each replacement. */
  async *events(options?: FollowOptions): AsyncGenerator<string> {
    for await (const event of this.#http.follow("quote/events", options)) {
      if (event.event === "quote") yield event.value() as string;
    }
  }
}
