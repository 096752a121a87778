/**
 * What a route says of itself, for the OpenAPI document: each route table
 * has a table of operations beside it, path for path and method for method,
 * and the document is built from those. Statuses follow from what an
 * operation does (its body, its token, the refusals of the catalogue it
 * may answer), so no status is listed by hand.
 * @module
 */

import type { Refusal } from "./catalogue.ts";
import type { FixedStatus } from "./response.ts";
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

/** A body, sent or answered: its schema, and an example. */
export interface Content {
  /** The content type; JSON when left out. */
  readonly type?: string;
  readonly schema: JsonObject;
  readonly example?: unknown;
}

/** One operation of a route. */
export interface Operation {
  readonly operationId: string;
  readonly summary: string;
  /** What a schema cannot say. */
  readonly description?: string;
  /** `X-Messaging-Token`: required, or optional (a stream opened as its user). */
  readonly token?: "required" | "optional";
  /** Whether its success answer's `token` authenticates the calls that take one. */
  readonly issuesToken?: boolean;
  readonly parameters?: readonly JsonObject[];
  /** The request body; always required, read as the content type says. */
  readonly body?: Content & { readonly description: string };
  /** The success answer (200). */
  readonly answer: Content & {
    readonly description: string;
    readonly headers?: JsonObject;
  };
  /** The catalogue's refusals it may answer, besides those of its body. */
  readonly refusals?: readonly Refusal[];
  /** The fixed `{status, message}` answers it may give, besides 401 and 500. */
  readonly fixed?: readonly FixedStatus[];
  /** Headers of a refusal's answer, by status (`Retry-After`). */
  readonly refusalHeaders?: Readonly<Record<number, JsonObject>>;
}

/** The operations of a route table: path, then method. */
export type Operations = Readonly<
  Record<string, Partial<Record<Method, Operation>>>
>;
