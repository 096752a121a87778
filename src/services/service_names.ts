/**
 * The services by name: both the composition and the OpenAPI description read them.
 * @module
 */

/**
 * One service by name.
 *
 * @example Serving one service
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler, type ServiceName } from "@lms/light-messaging";
 * const name: ServiceName = "quote";
 * const handler = createHandler({ service: name });
 * assert.equal((await handler(new Request("http://localhost/quote"))).status, 200);
 * assert.equal((await handler(new Request("http://localhost/users"))).status, 404);
 * ```
 */
export type ServiceName = "messaging" | "quote";

export const SERVICES: readonly ServiceName[] = ["messaging", "quote"];

/**
 * What `--service` selects: one service or `all`.
 *
 * @example Serving both
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler, type ServiceSelection } from "@lms/light-messaging";
 * const selection: ServiceSelection = "all";
 * const handler = createHandler({ service: selection });
 * assert.equal((await handler(new Request("http://localhost/quote"))).status, 200);
 * assert.equal((await handler(new Request("http://localhost/"))).status, 200);
 * ```
 */
export type ServiceSelection = ServiceName | "all";

/** The service names a selection stands for. */
export function servicesOf(selection: ServiceSelection): ServiceName[] {
  return selection === "all" ? [...SERVICES] : [selection];
}
