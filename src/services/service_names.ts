/**
 * The services by name, and what `--service` selects. Both the composition
 * and the OpenAPI description read these, so they live apart from either.
 * @module
 */

/**
 * One service by name.
 *
 * @example Serving one service
 * ```ts
 * import { createHandler, type ServiceName } from "@lms/light-messaging";
 * const name: ServiceName = "quote";
 * createHandler({ service: name });
 * ```
 */
export type ServiceName = "messaging" | "quote";

/** The services a process can serve. */
export const SERVICES: readonly ServiceName[] = ["messaging", "quote"];

/**
 * What `--service` selects: one service or `all`.
 *
 * @example Serving both
 * ```ts
 * import { createHandler, type ServiceSelection } from "@lms/light-messaging";
 * const selection: ServiceSelection = "all";
 * createHandler({ service: selection });
 * ```
 */
export type ServiceSelection = ServiceName | "all";

/** The service names a selection stands for. */
export function servicesOf(selection: ServiceSelection): ServiceName[] {
  return selection === "all" ? [...SERVICES] : [selection];
}
