/**
 * Every refusal, fixed body and close code, once for handlers, the OpenAPI document and clients.
 * @module
 */

/**
 * A location of an error entry: the URL (path and query) or the request body.
 *
 * @example Entries about the body
 * ```ts
 * import assert from "node:assert/strict";
 * import { createMessagingService, type ErrorLocation } from "@lms/light-messaging";
 * const messaging = createMessagingService();
 * const res = await messaging(
 *   new Request("http://localhost/users", { method: "POST", body: "" }),
 * );
 * const { errors } = await res.json();
 * const where: ErrorLocation = errors[0].location;
 * assert.equal(where, "body");
 * ```
 */
export type ErrorLocation = "url" | "body";

/**
 * One validation failure, as the contract's 400 envelope lists it.
 *
 * @example An entry
 * ```ts
 * import assert from "node:assert/strict";
 * import { type ErrorEntry, HttpError } from "@lms/light-messaging";
 * const entry: ErrorEntry = { location: "url", name: "name", description: "This user exists!" };
 * const res = new HttpError(400, [entry]).getResponse();
 * assert.deepEqual(await res.json(), { status: "error", errors: [entry] });
 * ```
 */
export interface ErrorEntry {
  /** Where the offending value was found. */
  location: ErrorLocation;
  /** The offending field. */
  name: string;
  /** A sentence a person can read. */
  description: string;
}

/** One refusal; {@linkcode entryOf} fills in a description's `{placeholder}`. */
export interface Refusal {
  readonly status: number;
  readonly location: ErrorLocation;
  readonly name: string;
  readonly description: string;
}

/** The longest name accepted, in Unicode code points. */
export const MAX_NAME_LENGTH = 64;

const body = (name: string, status = 400) => (description: string) =>
  ({ status, location: "body", name, description }) as const;
const url = (name: string, status = 400) => (description: string) =>
  ({ status, location: "url", name, description }) as const;

/** Every refusal of the service, by what it refuses. */
export const REFUSALS = {
  userExists: url("name")("This user exists!"),
  nameEmpty: body("name")("Name must not be empty"),
  nameDash: body("name")(
    "Name must not contain '-': the token header is split at its first '-'",
  ),
  nameControl: body("name")(
    "Name must not contain control characters or line breaks ({codePoint})",
  ),
  nameInvisible: body("name")(
    "Name must not contain invisible or direction-changing characters ({codePoint})",
  ),
  nameLeadingMark: body("name")(
    "Name must not start with a combining mark ({codePoint})",
  ),
  nameNoncharacter: body("name")(
    "Name must not contain noncharacters ({codePoint})",
  ),
  nameEdgeSpace: body("name")("Name must not start or end with white space"),
  nameTooLong: body("name")(
    `Name must be at most ${MAX_NAME_LENGTH} characters`,
  ),
  nameNotUtf8: body("name")("Name is not valid UTF-8"),
  usersFull: body("name", 503)(
    "No more users can register: the user limit is reached",
  ),
  notJson: body("message")("Not valid JSON"),
  nestedTooDeeply: body("message")("Nested too deeply"),
  numberTooLong: body("message")(
    "Number too long (at most {limit} characters)",
  ),
  missingText: body("text")("Missing text"),
  textNotString: body("text")("text must be a string"),
  badColor: body("color")("only red and black supported"),
  quoteStart: body("quote")("Does not start with a majuscule"),
  quoteEnd: body("quote")("Does not end properly"),
  quoteNotUtf8: body("quote")("Quote is not valid UTF-8"),
  bodyCutShort: body("body")("Request body was cut short"),
  bodyTimeout: body("body", 408)(
    "Request body did not arrive within {seconds} s",
  ),
  bodyTooLarge: body("body", 413)(
    "Request body is larger than the limit of {limit} bytes",
  ),
  historyBefore: url("before")("before must be a whole number from 1 to {max}"),
  historyLimit: url("limit")("limit must be a whole number from 1 to {max}"),
  tooManyWrites: url("rate", 429)(
    "Too many writes from this client: {burst} at once, then one every {period}; try again in {wait}",
  ),
  tooManyAuthFailures: url("rate", 429)(
    "Too many failed authentications from this client: {burst} at once, then one every {period}; try again in {wait}",
  ),
  clientStreamsFull: url("events", 429)(
    "Too many event streams are open from this client; close one first",
  ),
  clientWebSocketsFull: url("events", 429)(
    "Too many WebSockets are open from this client; close one first, or follow with an event stream",
  ),
  streamsFull: url("events", 503)(
    "Too many event streams are open on this server; try again later",
  ),
  notFollowing: url("events", 503)(
    "This server cannot follow new changes right now (its connection to the shared store is being restored); try again shortly",
  ),
  readersBehind: url("events", 503)(
    "Too much is waiting for this server's readers to open a stream with this catch-up right now; try again shortly",
  ),
  notUpgrade: url("upgrade")("Not a WebSocket upgrade request: {reason}"),
  webSocketsOff: url("upgrade")(
    "WebSockets are turned off on this server; follow with an event stream (GET without Upgrade)",
  ),
} as const satisfies Record<string, Refusal>;

/** The values of a refusal's `{placeholders}`. */
export type Placeholders = Record<string, string | number>;

const PLACEHOLDER = /\{(\w+)\}/g;

/** The entry `refusal` lists, its placeholders filled in from `values`. */
export function entryOf(
  refusal: Refusal,
  values: Placeholders = {},
): ErrorEntry {
  const description = refusal.description.replace(
    PLACEHOLDER,
    (_, key: string) => String(values[key]),
  );
  return { location: refusal.location, name: refusal.name, description };
}

/** A pattern matching every text `refusal` may have, whatever its placeholders hold. */
export function descriptionPattern(refusal: Refusal): string {
  const parts = refusal.description.split(PLACEHOLDER);
  // split() with a capturing group puts the placeholders' names at odd places.
  const pattern = parts.map((part, i) =>
    i % 2 === 1 ? ".+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  );
  return `^${pattern.join("")}$`;
}

/**
 * The statuses answered with a fixed `{status, message}` body.
 *
 * @example An error with no entries
 * ```ts
 * import assert from "node:assert/strict";
 * import { type FixedStatus, HttpError } from "@lms/light-messaging";
 * const status: FixedStatus = 404;
 * const res = new HttpError(status).getResponse();
 * assert.deepEqual(await res.json(), { status: 404, message: "Not Found" });
 * ```
 */
export type FixedStatus = 401 | 403 | 404 | 405 | 500 | 503;

/** The fixed bodies' messages, by status: `{"status": N, "message": M}`. */
export const STATUS_MESSAGES: Readonly<Record<FixedStatus, string>> = {
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** A WebSocket close code the server sends: when, and what a client does then. */
export interface CloseCode {
  readonly code: number;
  readonly when: string;
  readonly then: string;
}

const close = (code: number, then: string, when: string) =>
  ({ code, when, then }) as const;

/** The clients stop on `bad-frame` and `bad-token` and reconnect on the others. */
export const CLOSE_CODES = {
  stopping: close(1001, "reconnect", "the server is stopping, or no pong came"),
  "bad-frame": close(
    1003,
    "fix the client",
    "the client sent a frame other than one first token frame",
  ),
  "bad-token": close(1008, "register again", "the token does not authenticate"),
  unregistered: close(
    1008,
    "register again",
    "the socket's user was unregistered",
  ),
  fault: close(1011, "reconnect later", "the store did not answer"),
  reconnect: close(
    1012,
    "reconnect",
    "the process lost its subscription to changes, or the store started afresh",
  ),
  overflow: close(1013, "reconnect", "too much waited for this reader"),
  "auth-failures": close(
    1013,
    "reconnect later",
    "too many failed authentications from this client",
  ),
} as const satisfies Record<string, CloseCode>;
