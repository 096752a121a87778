/**
 * What a route says of itself, for the OpenAPI document: each route table
 * has a table of operations beside it, path for path and method for
 * method. Statuses other than 200 follow from what an operation does (its
 * body, its token, the catalogue's refusals it may answer), so no status
 * is listed by hand.
 * @module
 */

import type { FixedStatus, Refusal } from "./catalogue.ts";
import type { Method } from "./router.ts";

/**
 * A JSON object: the OpenAPI document, its parts and its schemas.
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

/** A body, sent or answered: its content type (JSON when left out), schema and example. */
export interface Content {
  readonly type?: string;
  readonly schema: JsonObject;
  readonly example?: unknown;
  readonly description: string;
}

/** One operation of a route. */
export interface Operation {
  readonly operationId: string;
  readonly summary: string;
  /** What a schema cannot say. */
  readonly description?: string;
  /** `X-Messaging-Token`: required, or optional (a stream read as its user). */
  readonly token?: "required" | "optional";
  /** Whether its answer's `token` authenticates the calls that take one. */
  readonly issuesToken?: boolean;
  readonly parameters?: readonly JsonObject[];
  /** The request body, always required. */
  readonly body?: Content;
  /** The success answer (200). */
  readonly answer: Content & { readonly headers?: JsonObject };
  /** The catalogue's refusals it may answer, besides those of any body. */
  readonly refusals?: readonly Refusal[];
  /** The fixed `{status, message}` answers it may give, besides 401, 500 and 503. */
  readonly fixed?: readonly FixedStatus[];
}

/** The operations of a route table: path, then method. */
export type Operations = Readonly<
  Record<string, Partial<Record<Method, Operation>>>
>;

/** The schema of an object with exactly `properties`, each required. */
export const exactObject = (properties: JsonObject): JsonObject => ({
  type: "object",
  required: Object.keys(properties),
  additionalProperties: false,
  properties,
});
