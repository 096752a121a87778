/**
 * What a route says of itself for the OpenAPI document; statuses other than 200 follow from it.
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

export interface Content {
  readonly type?: string;
  readonly schema: JsonObject;
  readonly example?: unknown;
  readonly description: string;
}

export interface Operation {
  readonly operationId: string;
  readonly summary: string;
  /** What a schema cannot say. */
  readonly description?: string;
  /** Optional: a stream read as its user. */
  readonly token?: "required" | "optional";
  /** Whether its answer's `token` authenticates. */
  readonly issuesToken?: boolean;
  readonly parameters?: readonly JsonObject[];
  readonly body?: Content;
  readonly answer: Content & { readonly headers?: JsonObject };
  /** Besides those of any body. */
  readonly refusals?: readonly Refusal[];
  /** Besides 401, 500 and 503. */
  readonly fixed?: readonly FixedStatus[];
}

export type Operations = Readonly<
  Record<string, Partial<Record<Method, Operation>>>
>;

export const exactObject = (properties: JsonObject): JsonObject => ({
  type: "object",
  required: Object.keys(properties),
  additionalProperties: false,
  properties,
});
