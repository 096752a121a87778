/**
 * The OpenAPI 3.1 document, built from each route table's operations and the catalogue of refusals.
 * @module
 */

import {
  descriptionPattern,
  entryOf,
  type FixedStatus,
  type Refusal,
  REFUSALS,
  STATUS_MESSAGES,
} from "../http/catalogue.ts";
import {
  type Content,
  exactObject,
  type JsonObject,
  type Operation,
  type Operations,
} from "../http/operation.ts";
import { JSON_CONTENT_TYPE } from "../http/response.ts";
import type { Method } from "../http/router.ts";
import { OPERATOR_OPERATIONS } from "../operations/operator_operations.ts";
import { MESSAGING_OPERATIONS } from "../services/messaging_operations.ts";
import { QUOTE_OPERATIONS } from "../services/quote_operations.ts";
import type { ServiceName } from "../services/service_names.ts";
import { SERVICE_LIMITS } from "../services/service_options.ts";
import { STORE_LIMITS } from "../store/store.ts";
import { HTML_CONTENT_TYPE } from "../web/chat_page.ts";
import pkg from "../../deno.json" with { type: "json" };

export type { JsonObject };

const ref = (kind: string, name: string) => ({
  $ref: `#/components/${kind}/${name}`,
});

/** Also the name of its schema and example. */
const refusalNames = new Map<Refusal, string>(
  Object.entries(REFUSALS).map(([name, refusal]) => [refusal, name]),
);
const nameOf = (r: Refusal | FixedStatus) =>
  typeof r === "number" ? `status${r}` : refusalNames.get(r)!;
const FIXED = Object.keys(STATUS_MESSAGES).map(Number) as FixedStatus[];

const FIXED_WHY: Record<FixedStatus, string> = {
  401:
    "The token header is missing, has no `-`, names no user, or carries another token.",
  403:
    "A browser's WebSocket upgrade from an origin neither the service's own nor allowed by `--cors-origin`.",
  404: "No route has this path (the query string is not part of it).",
  405: "The path is served, the method is not; decided before authentication.",
  500: "An unexpected fault; logged on the server.",
  503: "The shared store (Redis) is unreachable, or the server is stopping.",
};

/** Its exact text, or a pattern where the text has a value. */
const refusalSchema = (refusal: Refusal) =>
  exactObject({
    location: { const: refusal.location },
    name: { const: refusal.name },
    description: refusal.description.includes("{")
      ? { type: "string", pattern: descriptionPattern(refusal) }
      : { const: refusal.description },
  });

const EXAMPLE_VALUES = {
  limit: SERVICE_LIMITS.maxBodyBytes.default,
  seconds: SERVICE_LIMITS.bodyTimeoutMs.default / 1000,
  ...{ burst: 5, period: "10 seconds", wait: "10 seconds" },
  reason: "the upgrade header is missing",
};

const BODY_REFUSALS = [
  REFUSALS.bodyCutShort,
  REFUSALS.bodyTimeout,
  REFUSALS.bodyTooLarge,
];

const media = (
  content: Omit<Content, "description">,
  extra: JsonObject = {},
) => ({
  [content.type ?? JSON_CONTENT_TYPE]: {
    schema: content.schema,
    ...(content.example !== undefined && { example: content.example }),
    ...extra,
  },
});

/** The envelope of some of `refusals`, the fixed body, or either. */
function refusalResponse(
  status: number,
  refusals: readonly Refusal[],
  fixed: boolean,
): JsonObject {
  const schemas = [];
  const named: (Refusal | FixedStatus)[] = [...refusals];
  if (refusals.length > 0) {
    schemas.push(exactObject({
      status: { const: "error" },
      errors: {
        type: "array",
        minItems: 1,
        items: { anyOf: refusals.map((r) => ref("schemas", nameOf(r))) },
      },
    }));
  }
  if (fixed) {
    named.push(status as FixedStatus);
    schemas.push(ref("schemas", nameOf(status as FixedStatus)));
  }
  const examples = named.map((r) => [nameOf(r), ref("examples", nameOf(r))]);
  return {
    description: named.map((r) =>
      typeof r === "number" ? FIXED_WHY[r] : `\`${r.description}\``
    ).join("; "),
    // Refused for a while: past a cap, or while changes cannot be followed.
    ...((status === 503 ||
      refusals.some((r) => r.location === "url" && r.status === 429)) && {
      headers: {
        "Retry-After": {
          description: "Whole seconds after which to try again.",
          schema: { type: "integer", minimum: 1 },
        },
      },
    }),
    content: media({
      schema: schemas.length === 1 ? schemas[0]! : { oneOf: schemas },
    }, { examples: Object.fromEntries(examples) }),
  };
}

function responsesOf(method: Method, operation: Operation): JsonObject {
  const refusals = [
    ...(operation.body ? BODY_REFUSALS : []),
    ...(operation.refusals ?? []),
    // Every write spends the client's allowance under `--rate-limit`.
    ...(method === "GET" ? [] : [REFUSALS.tooManyWrites]),
    ...(operation.token ? [REFUSALS.tooManyAuthFailures] : []),
  ];
  // Any call may fault, or meet the store unreachable or the server stopping.
  const fixed = new Set<number>([500, 503, ...(operation.fixed ?? [])]);
  if (operation.token) fixed.add(401);
  const statuses = new Set([...refusals.map((r) => r.status), ...fixed]);
  const { answer } = operation;
  const responses: JsonObject = {
    200: {
      description: answer.description,
      ...(answer.headers && { headers: answer.headers }),
      content: media(answer),
    },
  };
  for (const status of [...statuses].sort()) {
    const some = refusals.filter((r) => r.status === status);
    responses[status] = refusalResponse(status, some, fixed.has(status));
  }
  return responses;
}

const TOKEN = { messagingToken: [] };

/** `linked`: the calls a token it issues authenticates. */
function operationObject(
  method: Method,
  operation: Operation,
  linked: readonly string[],
): JsonObject {
  const { operationId, summary, description, parameters, body, token } =
    operation;
  const responses = responsesOf(method, operation);
  if (operation.issuesToken) {
    (responses[200] as JsonObject).links = Object.fromEntries(
      linked.map((id) => [id, {
        operationId: id,
        description: "The token authenticates this call.",
        parameters: { "header.X-Messaging-Token": "$response.body#/token" },
      }]),
    );
  }
  return {
    operationId,
    summary,
    ...(description && { description }),
    ...(parameters && { parameters }),
    ...(token && { security: token === "required" ? [TOKEN] : [{}, TOKEN] }),
    ...(body && {
      requestBody: {
        required: true,
        description: body.description,
        content: media({ ...body, type: body.type ?? "application/json" }),
      },
    }),
    responses,
  };
}

/** `/chat` and `/openapi.json`: the program adds their routes. */
const CHAT: Operations = {
  "/chat": {
    GET: {
      operationId: "chatPage",
      summary: "The chat, as a web page",
      description:
        "One self-contained HTML page using this API: join, live messages from `/events`, send in black or red, the user list, leave, and the quote when the quote service is served beside messaging. It loads nothing from other hosts; its `Content-Security-Policy` allows only its own inline style and script, by hash.",
      answer: {
        description: "The page.",
        type: HTML_CONTENT_TYPE,
        schema: { type: "string" },
      },
    },
  },
};
const OPENAPI: Operations = {
  "/openapi.json": {
    GET: {
      operationId: "openApi",
      summary: "This document",
      answer: { description: "This document.", schema: { type: "object" } },
    },
  },
};
const OPERATIONS = { messaging: MESSAGING_OPERATIONS, quote: QUOTE_OPERATIONS };

function pathsOf(tables: readonly Operations[]): JsonObject {
  const all = tables.flatMap((table) =>
    Object.entries(table).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) =>
        [path, method as Method, op] as const
      )
    )
  );
  const linked = all.flatMap(([, , op]) => op.token ? [op.operationId] : []);
  const paths: Record<string, JsonObject> = {};
  for (const [path, method, op] of all) {
    paths[path] ??= {};
    paths[path][method.toLowerCase()] = operationObject(method, op, linked);
  }
  return paths;
}

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
  schemas: Object.fromEntries([
    ...[...refusalNames].map(([r, name]) => [name, refusalSchema(r)]),
    ...FIXED.map((status) => {
      const schema = exactObject({
        status: { const: status },
        message: { const: STATUS_MESSAGES[status] },
      });
      // `/readyz` says why it is not ready.
      if (status === 503) {
        (schema.properties as JsonObject).reason = { type: "string" };
      }
      return [nameOf(status), schema];
    }),
  ]),
  examples: Object.fromEntries([
    ...[...refusalNames].map(([r, name]) => [name, {
      value: { status: "error", errors: [entryOf(r, EXAMPLE_VALUES)] },
    }]),
    ...FIXED.map((status) => [nameOf(status), {
      value: { status, message: STATUS_MESSAGES[status] },
    }]),
  ]),
  responses: {
    NotFound: refusalResponse(404, [], true),
    MethodNotAllowed: {
      ...refusalResponse(405, [], true),
      headers: {
        Allow: {
          description:
            "The methods the path serves, such as `GET, HEAD, POST`.",
          schema: { type: "string" },
        },
      },
    },
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
        'An unknown path is 404 (`#/components/responses/NotFound`) and a method a path does not serve is 405 with an `Allow` header (`#/components/responses/MethodNotAllowed`), both as `{"status": N, "message": "..."}`, on every path. `HEAD` is served wherever `GET` is. ' +
        "No error changes state. A body its schema accepts is never refused with an entry about its content, but for a message nested deeper than 64 levels, which no schema states: entries at location `body` name the part that breaks the schema, or are named `body` when the body did not arrive whole (cut short, too slow, too large); entries at `url` depend on the state (a name already taken, or one that looks the same). A text schema with `x-normalized` holds of the text in that Unicode form. " +
        `The service keeps the newest \`--history\` messages (default ${STORE_LIMITS.history.default}) ` +
        `and at most \`--max-users\` users (default ${STORE_LIMITS.maxUsers.default}).`,
    },
    // Relative: the server is wherever the document was fetched from.
    servers: [{ url: "/" }],
    paths: pathsOf([
      ...services.map((s) => OPERATIONS[s]),
      services.includes("messaging") ? CHAT : {},
      OPERATOR_OPERATIONS,
      OPENAPI,
    ]),
    components,
  };
}
