/**
 * What each route of the messaging service says of itself, for the OpenAPI document.
 * @module
 */

import { REFUSALS } from "../http/catalogue.ts";
import { exactObject, type Operations } from "../http/operation.ts";
import { streamOperation } from "../streams/stream_operations.ts";
import { HISTORY_BEFORE, HISTORY_LIMIT } from "./history.ts";
import { NEW_MESSAGE_SCHEMA } from "./message_check.ts";
import { NAME_SCHEMA } from "./user_name.ts";

const names = { type: "array", items: { type: "string" } };

/** A message as `GET /` shows it. */
const MESSAGE_SCHEMA = {
  ...NEW_MESSAGE_SCHEMA,
  required: ["text", "color", "user"],
  properties: {
    ...NEW_MESSAGE_SCHEMA.properties,
    user: { type: "string", description: "The poster's name." },
  },
};

const wholeQuery = (
  name: string,
  range: { min: number; max: number; default?: number },
  description: string,
) => ({
  name,
  in: "query",
  required: false,
  description,
  schema: {
    type: "integer",
    minimum: range.min,
    maximum: range.max,
    ...(range.default && { default: range.default }),
  },
});

/** The messaging service's operations, as `messagingRoutes` serves them. */
export const MESSAGING_OPERATIONS: Operations = {
  "/users": {
    POST: {
      operationId: "register",
      summary: "Register a name and get its token",
      issuesToken: true,
      body: {
        description:
          "The name, as raw UTF-8 text, read in Unicode NFC: it must come back intact in the token header, which is split at its first `-`, and show what it is. A name whose confusable skeleton (UTS #39) is a registered name's is taken.",
        type: "text/plain; charset=UTF-8",
        schema: NAME_SCHEMA,
        example: "José",
      },
      answer: {
        description: "Registered.",
        schema: exactObject({
          token: { type: "string", pattern: "^[^-]+-[0-9a-f]{40}$" },
        }),
        example: { token: "José-3f0c1e5a9b7d2c4e6f8a0b1c2d3e4f5a6b7c8d9e" },
      },
      refusals: Object.values(REFUSALS).filter((r) => r.name === "name"),
    },
    GET: {
      operationId: "listUsers",
      summary: "Every registered name, in registration order",
      token: "required",
      answer: {
        description: "The names.",
        schema: exactObject({ users: names }),
        example: { users: ["José", "alice"] },
      },
    },
    DELETE: {
      operationId: "unregister",
      summary: "Unregister; the token stops working and the name is free",
      token: "required",
      answer: {
        description: "Unregistered.",
        schema: exactObject({ Goodbye: { type: "string" } }),
        example: { Goodbye: "José" },
      },
    },
  },
  "/users/online": {
    GET: {
      operationId: "listOnline",
      summary: "The registered names online now, in registration order",
      description:
        "A user is online while at least one event stream authenticated as them is open (`GET /events` with `X-Messaging-Token`), in any process sharing the store; a process that dies takes its readers offline within 3 × `--heartbeat-ms`. Follow changes with the `presence` events of `GET /events`.",
      token: "required",
      answer: {
        description: "The names.",
        schema: exactObject({ online: names }),
        example: { online: ["José"] },
      },
    },
  },
  "/": {
    GET: {
      operationId: "newestMessages",
      summary: "The 5 newest messages, newest first",
      answer: {
        description: "At most 5 messages.",
        schema: {
          type: "array",
          maxItems: 5,
          items: MESSAGE_SCHEMA,
        },
        example: [{ text: "ho", color: "red", user: "alice" }, {
          text: "hi",
          mood: "good",
          color: "black",
          user: "alice",
        }],
      },
    },
    POST: {
      operationId: "postMessage",
      summary: "Post a message as the authenticated user",
      description:
        "Checks run in this order and stop at the first failure: valid JSON nested at most 64 levels deep (which no schema states), an object with `text`, `text` a string, `color` `red` or `black` when present. `color` defaults to `black`, `user` is set to the poster, every other field is kept, numbers digit for digit.",
      token: "required",
      body: {
        description: "The message.",
        schema: NEW_MESSAGE_SCHEMA,
        example: { text: "hi", color: "red", mood: "good" },
      },
      answer: {
        description: "Added.",
        schema: exactObject({ status: { const: "added" } }),
        example: { status: "added" },
      },
      refusals: [
        REFUSALS.notJson,
        REFUSALS.nestedTooDeeply,
        REFUSALS.numberTooLong,
        REFUSALS.missingText,
        REFUSALS.textNotString,
        REFUSALS.badColor,
      ],
    },
  },
  "/messages": {
    GET: {
      operationId: "olderMessages",
      summary: "Older messages, page by page, newest first",
      description:
        "The retained messages whose ids are below `before`, newest first, at most `limit` of them. `next` is the `before` of the following older page (the oldest id answered), or `null` when nothing older is retained. Messages that have left the history (`--history`) are not answered; an id that never existed is not an error.",
      parameters: [
        wholeQuery(
          "before",
          HISTORY_BEFORE,
          "Answer only messages with an id below this one (default: every retained message).",
        ),
        wholeQuery("limit", HISTORY_LIMIT, "At most this many messages."),
      ],
      answer: {
        description: "One page.",
        schema: exactObject({
          messages: {
            type: "array",
            maxItems: HISTORY_LIMIT.max,
            items: exactObject({
              id: { type: "integer", minimum: 1 },
              message: MESSAGE_SCHEMA,
            }),
          },
          next: { type: ["integer", "null"], minimum: 1 },
        }),
        example: {
          messages: [
            { id: 42, message: { text: "ho", color: "red", user: "alice" } },
            { id: 41, message: { text: "hi", color: "black", user: "bob" } },
          ],
          next: 41,
        },
      },
      refusals: [REFUSALS.historyBefore, REFUSALS.historyLimit],
    },
  },
  "/events": {
    GET: streamOperation({
      operationId: "followMessages",
      summary: "New messages, live (server-sent events)",
      token: "optional",
      description:
        'Opens with `retry: 1000`, then the messages `GET /` answers, oldest first (or, with a `Last-Event-ID` header, every retained message with a greater id, after an `event: gap` with `{"missed": K}` when some already left the history), then every new message as it is stored, in id order, each once. A message event is `id: <id>`, `event: message`, `data: <the message as GET / shows it>`. A comment line comes after `--heartbeat-ms` without an event. `Last-Event-ID` that is not a whole number, or is above the newest id, counts as absent.\n\n' +
        '**Presence.** Opened with `X-Messaging-Token`, the stream makes its user online while it is open (a token that does not authenticate is 401; without the header the stream is anonymous). Every reader gets `event: presence` with `data: {"name": N, "online": true}` when a user comes online anywhere, `{"name": N, "online": false}` when it goes offline everywhere, and `{"name": N, "registered": false}` when it is unregistered (`DELETE /users`, or forgotten by `--forget-users-after`). Presence events have no id and are not replayed on resuming: `GET /users/online` gives the state to start from.',
      example:
        'retry: 1000\n\nid: 7\nevent: message\ndata: {"text":"hi","color":"black","user":"ann"}\n\nevent: presence\ndata: {"name":"bob","online":true}\n\n',
    }),
  },
};
