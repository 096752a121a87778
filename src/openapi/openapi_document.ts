/**
 * The OpenAPI 3.1 description of both services, built as data from the
 * contract, served at `GET /openapi.json` and written to a file by
 * `deno task openapi`.
 * @module
 */

import { HTML_CONTENT_TYPE } from "../web/chat_page.ts";
import { JSON_CONTENT_TYPE } from "../http/response.ts";
import { METRICS_CONTENT_TYPE } from "../operations/metrics.ts";
import type { ServiceName } from "../services/service_names.ts";
import { SERVICE_LIMITS } from "../services/service_options.ts";
import { STORE_LIMITS } from "../store/store.ts";
import pkg from "../../deno.json" with { type: "json" };

/**
 * A JSON object: the document and its parts.
 *
 * @example Reading the paths
 * ```ts
 * import assert from "node:assert/strict";
 * import { type JsonObject, openApiDocument } from "@lms/light-messaging";
 * const paths = openApiDocument().paths as JsonObject;
 * assert.ok("/quote" in paths);
 * assert.ok("/users" in paths);
 * ```
 */
export type JsonObject = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const response = (ref: string) => ({ $ref: `#/components/responses/${ref}` });

/** A JSON answer of the contract, with its one content type. */
function json(
  description: string,
  schema: JsonObject,
  examples?: JsonObject,
): JsonObject {
  const media: JsonObject = { schema };
  if (examples) {
    media.examples = Object.fromEntries(
      Object.entries(examples).map(([k, value]) => [k, { value }]),
    );
  }
  return { description, content: { [JSON_CONTENT_TYPE]: media } };
}

/** Example envelopes, each listing one entry: `[location, name, description]`. */
const envelopes = (entries: Record<string, [string, string, string]>) =>
  Object.fromEntries(
    Object.entries(entries).map(([k, [location, name, text]]) => [k, {
      status: "error",
      errors: [{ location, name, description: text }],
    }]),
  );

/** A 400-style envelope answer, with one example per error entry it may list. */
function refused(
  description: string,
  entries: Record<string, [string, string, string]>,
): JsonObject {
  return json(description, ref("ErrorEnvelope"), envelopes(entries));
}

const rawText = (description: string, example: string) => ({
  required: false,
  description,
  content: {
    "text/plain; charset=UTF-8": {
      schema: { type: "string" },
      example,
    },
  },
});

const auth = [{ messagingToken: [] }];

/** What any call may answer when something goes wrong on the server's side. */
const FAULTS = {
  500: response("InternalServerError"),
  503: response("ServiceUnavailable"),
};

const nameRefusals: Record<string, [string, string, string]> = {
  empty: ["body", "name", "Name must not be empty"],
  dash: [
    "body",
    "name",
    "Name must not contain '-': the token header is split at its first '-'",
  ],
};

/** An event stream answer: `text/event-stream`, described in words and an example. */
function eventStream(
  description: string,
  example: string,
): JsonObject {
  return {
    description,
    headers: {
      "Cache-Control": {
        schema: { type: "string", const: "no-cache" },
      },
    },
    content: {
      "text/event-stream; charset=utf-8": {
        schema: { type: "string" },
        example,
      },
    },
  };
}

/** Past `--max-streams`, or while Redis is unreachable. */
const STREAM_REFUSED = {
  429: refused(
    "This client has `--max-streams-per-client` streams open (default 20).",
    {
      tooMany: [
        "url",
        "events",
        "Too many event streams are open from this client; close one first",
      ],
    },
  ),
  503: {
    ...json(
      "Too many event streams are open on this server, or (with Redis) this server cannot follow new changes right now, its subscription being down: a stream opened then would wait in vain, so none is (the envelope, `url`/`events`, with `Retry-After`); or the store is unreachable (`{status, message}`).",
      { oneOf: [ref("ErrorEnvelope"), ref("StatusMessage")] },
      envelopes({
        tooMany: [
          "url",
          "events",
          "Too many event streams are open on this server; try again later",
        ],
        notFollowing: [
          "url",
          "events",
          "This server cannot follow new changes right now (its connection to the shared store is being restored); try again shortly",
        ],
      }),
    ),
    headers: {
      "Retry-After": {
        description:
          "Whole seconds after which to try again, when this server cannot follow changes.",
        schema: { type: "integer", minimum: 1 },
      },
    },
  },
  500: response("InternalServerError"),
};

const messagingPaths: JsonObject = {
  "/events": {
    get: {
      operationId: "followMessages",
      summary: "New messages, live (server-sent events)",
      description:
        'Opens with `retry: 1000`, then the messages `GET /` answers, oldest first (or, with a `Last-Event-ID` header, every retained message with a greater id, after an `event: gap` with `{"missed": K}` when some already left the history), then every new message as it is stored, in id order, each once. A message event is `id: <id>`, `event: message`, `data: <the message as GET / shows it>`. A comment line comes after `--heartbeat-ms` without an event. `Last-Event-ID` that is not a whole number, or is above the newest id, counts as absent.\n\n' +
        '**Presence.** Opened with `X-Messaging-Token`, the stream makes its user online while it is open (a token that does not authenticate is 401; without the header the stream is anonymous). Every reader gets `event: presence` with `data: {"name": N, "online": true}` when a user comes online anywhere, `{"name": N, "online": false}` when it goes offline everywhere, and `{"name": N, "registered": false}` when it is unregistered (`DELETE /users`, or forgotten by `--forget-users-after`). Presence events have no id and are not replayed on resuming: `GET /users/online` gives the state to start from.' +
        '\n\n**WebSocket.** With a WebSocket upgrade the same stream comes as a socket (same caps, counted with event streams; same catch-up and order), each event one text frame holding one JSON object: `{"event":"message","id":6,"data":<message>}`, `{"event":"gap","data":{"missed":K}}`, `{"event":"quote","data":<quote>}`, `{"event":"presence","data":{...}}`. The client may send one first frame `{"token":"<name>-<token>"}` (bad token: close 1008; any other frame: close 1003). A browser upgrade from an origin that is neither the service\'s own nor allowed by `--cors-origin` is answered 403. Close codes: 1001 stopping or no pong, 1011 store fault, 1012 reconnect (subscription lost), 1013 reader too far behind. See docs/api.md.',
      security: [{}, ...auth],
      parameters: [{
        name: "Last-Event-ID",
        in: "header",
        required: false,
        description: "The id of the last message the reader has.",
        schema: { type: "string" },
      }, {
        name: "lastEventId",
        in: "query",
        required: false,
        description:
          "Means what `Last-Event-ID` means, for clients that cannot send the header (a browser's first connection, any WebSocket); the header wins when both are sent.",
        schema: { type: "string" },
      }],
      responses: {
        200: eventStream(
          "The stream; it stays open.",
          'retry: 1000\n\nid: 7\nevent: message\ndata: {"text":"hi","color":"black","user":"ann"}\n\nevent: presence\ndata: {"name":"bob","online":true}\n\n',
        ),
        401: response("Unauthorized"),
        ...STREAM_REFUSED,
      },
    },
  },
  "/chat": {
    get: {
      operationId: "chatPage",
      summary: "The chat, as a web page",
      description:
        "One self-contained HTML page using this API: join, live messages from `/events`, send in black or red, the user list, leave, and the quote when the quote service is served beside messaging. It loads nothing from other hosts; its `Content-Security-Policy` allows only its own inline style and script, by hash. The token lives in the tab's `sessionStorage`.",
      responses: {
        200: {
          description: "The page.",
          content: { [HTML_CONTENT_TYPE]: { schema: { type: "string" } } },
        },
      },
    },
  },
  "/users": {
    post: {
      operationId: "register",
      summary: "Register a name and get its token",
      requestBody: rawText("The name, as raw UTF-8 text.", "José"),
      responses: {
        200: json("Registered.", ref("Token"), {
          registered: {
            token: "José-3f0c1e5a9b7d2c4e6f8a0b1c2d3e4f5a6b7c8d9e",
          },
        }),
        400: refused(
          "The name is taken, or cannot authenticate: empty; containing `-` or a control character; leading or trailing white space; over 64 code points; not valid UTF-8.",
          {
            exists: ["url", "name", "This user exists!"],
            ...nameRefusals,
          },
        ),
        413: response("PayloadTooLarge"),
        ...FAULTS,
        503: json(
          "The user limit (`--max-users`) is reached (the 400-style envelope), or the shared store is unreachable (`{status, message}`).",
          { oneOf: [ref("ErrorEnvelope"), ref("StatusMessage")] },
          {
            full: {
              status: "error",
              errors: [{
                location: "body",
                name: "name",
                description:
                  "No more users can register: the user limit is reached",
              }],
            },
            unavailable: { status: 503, message: "Service Unavailable" },
          },
        ),
      },
    },
    get: {
      operationId: "listUsers",
      summary: "Every registered name, in registration order",
      security: auth,
      responses: {
        200: json("The names.", ref("Users"), {
          users: { users: ["José", "alice"] },
        }),
        401: response("Unauthorized"),
        ...FAULTS,
      },
    },
    delete: {
      operationId: "unregister",
      summary: "Unregister; the token stops working and the name is free",
      security: auth,
      responses: {
        200: json("Unregistered.", ref("Goodbye"), {
          goodbye: { Goodbye: "José" },
        }),
        401: response("Unauthorized"),
        ...FAULTS,
      },
    },
  },
  "/users/online": {
    get: {
      operationId: "listOnline",
      summary: "The registered names online now, in registration order",
      description:
        "A user is online while at least one event stream authenticated as them is open (`GET /events` with `X-Messaging-Token`), in any process sharing the store; a process that dies takes its readers offline within 3 × `--heartbeat-ms`. Follow changes with the `presence` events of `GET /events`.",
      security: auth,
      responses: {
        200: json("The names.", ref("Online"), {
          online: { online: ["José"] },
        }),
        401: response("Unauthorized"),
        ...FAULTS,
      },
    },
  },
  "/": {
    get: {
      operationId: "newestMessages",
      summary: "The 5 newest messages, newest first",
      responses: {
        200: json("At most 5 messages.", ref("Messages"), {
          messages: {
            0: { text: "ho", color: "red", user: "alice" },
            1: { text: "hi", mood: "good", color: "black", user: "alice" },
          },
        }),
        ...FAULTS,
      },
    },
    post: {
      operationId: "postMessage",
      summary: "Post a message as the authenticated user",
      description:
        "Checks run in this order and stop at the first failure: valid JSON, an object with `text`, `text` a string, `color` `red` or `black` when present. `color` defaults to `black`, `user` is set to the poster, every other field is kept.",
      security: auth,
      requestBody: {
        required: true,
        content: {
          "application/json": {
            schema: ref("NewMessage"),
            example: { text: "hi", color: "red", mood: "good" },
          },
        },
      },
      responses: {
        200: json("Added.", ref("Added"), { added: { status: "added" } }),
        400: refused("The message failed a check.", {
          notJson: ["body", "message", "Not valid JSON"],
          noText: ["body", "text", "Missing text"],
          textNotString: ["body", "text", "text must be a string"],
          badColor: ["body", "color", "only red and black supported"],
        }),
        401: response("Unauthorized"),
        413: response("PayloadTooLarge"),
        ...FAULTS,
      },
    },
  },
};

const quotePaths: JsonObject = {
  "/quote/events": {
    get: {
      operationId: "followQuote",
      summary: "The quote, live (server-sent events)",
      description:
        "Opens with `retry: 1000` and the current quote, then every replacement: `event: quote`, `data: <the quote as a JSON string>`. No ids: the newest value is all a reader needs." +
        '\n\n**WebSocket.** With a WebSocket upgrade the same stream comes as a socket (same caps, counted with event streams; same catch-up and order), each event one text frame holding one JSON object: `{"event":"message","id":6,"data":<message>}`, `{"event":"gap","data":{"missed":K}}`, `{"event":"quote","data":<quote>}`, `{"event":"presence","data":{...}}`. The client may send one first frame `{"token":"<name>-<token>"}` (bad token: close 1008; any other frame: close 1003). A browser upgrade from an origin that is neither the service\'s own nor allowed by `--cors-origin` is answered 403. Close codes: 1001 stopping or no pong, 1011 store fault, 1012 reconnect (subscription lost), 1013 reader too far behind. See docs/api.md.',
      responses: {
        200: eventStream(
          "The stream; it stays open.",
          'retry: 1000\n\nevent: quote\ndata: "Not set, yet !"\n\n',
        ),
        ...STREAM_REFUSED,
      },
    },
  },
  "/quote": {
    get: {
      operationId: "getQuote",
      summary: "The quote",
      responses: {
        200: json("The quote, as a JSON string.", ref("Quote"), {
          initial: "Not set, yet !",
        }),
        ...FAULTS,
      },
    },
    post: {
      operationId: "setQuote",
      summary: "Replace the quote",
      description:
        "Both checks run: the first character must be ASCII `A`–`Z`, the last `.`, `?` or `!`.",
      requestBody: rawText(
        "The new quote, as raw UTF-8 text.",
        "Hello, world!",
      ),
      responses: {
        200: json("Replaced.", { type: "null" }, { replaced: null }),
        400: refused("The quote failed a check, or both.", {
          majuscule: ["body", "quote", "Does not start with a majuscule"],
          end: ["body", "quote", "Does not end properly"],
          utf8: ["body", "quote", "Quote is not valid UTF-8"],
        }),
        413: response("PayloadTooLarge"),
        ...FAULTS,
      },
    },
  },
};

/** A probe's 200: `{"status": status}`. */
const probeAnswer = (description: string, status: string) =>
  json(description, {
    type: "object",
    required: ["status"],
    properties: { status: { const: status } },
  }, { [status]: { status } });

/** `/healthz`, `/readyz` and `/metrics`, served whatever the services. */
const operationPaths: JsonObject = {
  "/healthz": {
    get: {
      operationId: "health",
      summary: "Liveness: the process serves",
      responses: {
        200: probeAnswer("Serving.", "ok"),
      },
    },
  },
  "/readyz": {
    get: {
      operationId: "readiness",
      summary: "Readiness: the store answers",
      description:
        "The memory store is always ready; Redis is when its subscription to changes is up (else it cannot serve event streams exactly) and it answers a `PING` within a second. Also 503 while the server is stopping.",
      responses: {
        200: probeAnswer("Ready to serve.", "ready"),
        503: response("ServiceUnavailable"),
      },
    },
  },
  "/metrics": {
    get: {
      operationId: "metrics",
      summary: "Metrics, in the Prometheus text format",
      description:
        "`lms_http_requests_total{route,method,status}`, `lms_http_request_duration_seconds{route}` (histogram), `lms_event_streams_open`, `lms_event_stream_connections_closing`, `lms_store_failures_total`, `lms_registered_users`, and the process's `lms_process_*` and `lms_event_loop_lag_seconds`. Route labels are the paths above; any other path is `unknown`.",
      responses: {
        200: {
          description: "The metrics.",
          content: {
            [METRICS_CONTENT_TYPE]: {
              schema: { type: "string" },
              example:
                '# TYPE lms_http_requests_total counter\nlms_http_requests_total{route="/quote",method="GET",status="200"} 3\n',
            },
          },
        },
      },
    },
  },
};

/**
 * `paths` with the 429 of `--rate-limit` on every write (`POST` and
 * `DELETE`), as the rate limit wraps every write of the route table.
 */
function withWriteLimits(paths: JsonObject): JsonObject {
  return Object.fromEntries(
    Object.entries(paths).map(([path, operations]) => [
      path,
      Object.fromEntries(
        Object.entries(operations as JsonObject).map(([method, op]) => {
          const operation = op as JsonObject;
          if (method !== "post" && method !== "delete") return [method, op];
          return [method, {
            ...operation,
            responses: {
              ...(operation.responses as JsonObject),
              429: response("TooManyWrites"),
            },
          }];
        }),
      ),
    ]),
  );
}

const pathsOf: Record<ServiceName, JsonObject> = {
  messaging: messagingPaths,
  quote: quotePaths,
};

const statusMessage = (status: number, message: string, description: string) =>
  json(description, ref("StatusMessage"), {
    [String(status)]: { status, message },
  });

const components: JsonObject = {
  securitySchemes: {
    messagingToken: {
      type: "apiKey",
      in: "header",
      name: "X-Messaging-Token",
      description:
        "`<name>-<token>` as `POST /users` returned it; split at its first `-`. A value that is valid UTF-8 is read as UTF-8, any other as ISO-8859-1 (one byte a character): names up to U+00FF may be sent either way, names beyond it only as UTF-8 bytes.",
    },
  },
  schemas: {
    Token: {
      type: "object",
      required: ["token"],
      additionalProperties: false,
      properties: {
        token: { type: "string", pattern: "^[^-]+-[0-9a-f]{40}$" },
      },
    },
    Users: {
      type: "object",
      required: ["users"],
      additionalProperties: false,
      properties: { users: { type: "array", items: { type: "string" } } },
    },
    Online: {
      type: "object",
      required: ["online"],
      additionalProperties: false,
      properties: { online: { type: "array", items: { type: "string" } } },
    },
    Goodbye: {
      type: "object",
      required: ["Goodbye"],
      additionalProperties: false,
      properties: { Goodbye: { type: "string" } },
    },
    NewMessage: {
      type: "object",
      required: ["text"],
      properties: {
        text: { type: "string" },
        color: { enum: ["red", "black"], default: "black" },
      },
      additionalProperties: true,
    },
    Message: {
      type: "object",
      required: ["text", "color", "user"],
      properties: {
        text: { type: "string" },
        color: { enum: ["red", "black"] },
        user: { type: "string", description: "The poster's name." },
      },
      additionalProperties: true,
    },
    Messages: { type: "array", maxItems: 5, items: ref("Message") },
    Added: {
      type: "object",
      required: ["status"],
      additionalProperties: false,
      properties: { status: { const: "added" } },
    },
    Quote: { type: "string" },
    ErrorEntry: {
      type: "object",
      required: ["location", "name", "description"],
      additionalProperties: false,
      properties: {
        location: { enum: ["url", "body"] },
        name: { type: "string" },
        description: { type: "string" },
      },
    },
    ErrorEnvelope: {
      type: "object",
      required: ["status", "errors"],
      additionalProperties: false,
      properties: {
        status: { const: "error" },
        errors: { type: "array", minItems: 1, items: ref("ErrorEntry") },
      },
    },
    StatusMessage: {
      type: "object",
      required: ["status", "message"],
      additionalProperties: false,
      properties: {
        status: { type: "integer" },
        message: { type: "string" },
      },
    },
  },
  responses: {
    Unauthorized: statusMessage(
      401,
      "Unauthorized",
      "The token header is missing, has no `-`, names no user, or carries another token.",
    ),
    PayloadTooLarge: refused(
      `The body is over \`--max-body-bytes\` (default ${SERVICE_LIMITS.maxBodyBytes.default}).`,
      {
        tooLarge: [
          "body",
          "body",
          `Request body is larger than the limit of ${SERVICE_LIMITS.maxBodyBytes.default} bytes`,
        ],
      },
    ),
    NotFound: statusMessage(
      404,
      "Not Found",
      "No route has this path (the query string is not part of it).",
    ),
    MethodNotAllowed: {
      ...statusMessage(
        405,
        "Method Not Allowed",
        "The path is served, the method is not; decided before authentication.",
      ),
      headers: {
        Allow: {
          description:
            "The methods the path serves, such as `GET, HEAD, POST`.",
          schema: { type: "string" },
        },
      },
    },
    InternalServerError: statusMessage(
      500,
      "Internal Server Error",
      "An unexpected fault; logged on the server.",
    ),
    TooManyWrites: {
      ...refused(
        "This client made its `--rate-limit=BURST/SECONDS` writes (`BURST` at once, then one every `SECONDS`); nothing was stored. Only with `--rate-limit`.",
        {
          rate: [
            "url",
            "rate",
            "Too many writes from this client: 5 at once, then one every 10 seconds; try again in 10 seconds",
          ],
        },
      ),
      headers: {
        "Retry-After": {
          description:
            "Whole seconds after which a write from this client is allowed.",
          schema: { type: "integer", minimum: 1 },
        },
      },
    },
    ServiceUnavailable: statusMessage(
      503,
      "Service Unavailable",
      "The shared store (Redis) is unreachable, or the server is stopping.",
    ),
  },
};

/**
 * The OpenAPI 3.1 document of `services`.
 *
 * @example Describing the quote service alone
 * ```ts
 * import assert from "node:assert/strict";
 * import { type JsonObject, openApiDocument } from "@lms/light-messaging";
 * const document = openApiDocument(["quote"]);
 * assert.equal(document.openapi, "3.1.0");
 * const paths = document.paths as JsonObject;
 * assert.ok("/quote" in paths);
 * assert.ok(!("/users" in paths));
 * ```
 */
export function openApiDocument(
  services: readonly ServiceName[] = ["messaging", "quote"],
): JsonObject {
  return {
    openapi: "3.1.0",
    info: {
      title: "Light messaging and quote services",
      version: pkg.version,
      license: { name: pkg.license, identifier: pkg.license },
      description:
        `Every answer is JSON with \`Content-Type: ${JSON_CONTENT_TYPE}\`. ` +
        "An unknown path is 404 (`#/components/responses/NotFound`) and a method a path does not serve is 405 with an `Allow` header (`#/components/responses/MethodNotAllowed`), " +
        'both as `{"status": N, "message": "..."}`, on every path. `HEAD` is served wherever `GET` is. ' +
        "No error changes state. " +
        `The service keeps the newest \`--history\` messages (default ${STORE_LIMITS.history.default}) ` +
        `and at most \`--max-users\` users (default ${STORE_LIMITS.maxUsers.default}).`,
    },
    // Relative: the server is wherever the document was fetched from.
    servers: [{ url: "/" }],
    paths: Object.assign(
      {},
      ...services.map((s) => withWriteLimits(pathsOf[s])),
      operationPaths,
      {
        "/openapi.json": {
          get: {
            operationId: "openApi",
            summary: "This document",
            responses: {
              200: json("The OpenAPI document.", { type: "object" }),
            },
          },
        },
      },
    ),
    components,
  };
}
