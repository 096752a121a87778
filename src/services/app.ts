/**
 * Composition: which services one handler serves, over one shared store,
 * with their OpenAPI description at `/openapi.json`.
 * @module
 */

import {
  createRouter,
  type FaultLogger,
  type Handler,
  mergeRoutes,
} from "../http/router.ts";
import { encodeJson, jsonResponse } from "../http/response.ts";
import { openApiDocument } from "../openapi/openapi_document.ts";
import { MemoryStore } from "../store/memory_store.ts";
import { messagingRoutes } from "./messaging.ts";
import { quoteRoutes } from "./quote.ts";
import { type ServiceOptions, streamHubOf } from "./service_options.ts";
import { type ServiceSelection, servicesOf } from "./service_names.ts";
import { mapStoreError } from "./store_errors.ts";

/**
 * Options of {@linkcode createHandler}.
 *
 * @example Both services over one store
 * ```ts
 * import { createHandler, type HandlerOptions, MemoryStore } from "@lms/light-messaging";
 * const options: HandlerOptions = { service: "all", store: new MemoryStore({ history: 50 }) };
 * createHandler(options);
 * ```
 */
export interface HandlerOptions extends ServiceOptions {
  /** Which services to serve. Default `all`. */
  service?: ServiceSelection;
  /** Where unexpected faults are reported; the client only ever sees a bare 500. Default: standard error, with the stack. */
  logFault?: FaultLogger;
}

const routesOf = { messaging: messagingRoutes, quote: quoteRoutes };

/**
 * Builds one handler serving the selected services over one shared store,
 * and their OpenAPI description at `/openapi.json`.
 *
 * @example Mounting both services in Deno.serve
 * ```ts
 * import { createHandler } from "@lms/light-messaging";
 * const handler = createHandler({ service: "all" });
 * const res = await handler(new Request("http://localhost/"));
 * console.assert(res.status === 200);
 * ```
 */
export function createHandler(options: HandlerOptions = {}): Handler {
  const shared = { ...options, store: options.store ?? new MemoryStore() };
  const services = servicesOf(options.service ?? "all");
  const description = encodeJson(openApiDocument(services));
  // One hub, so the stream cap counts every stream of the process.
  const hub = streamHubOf(shared);
  return createRouter(
    mergeRoutes(
      ...services.map((name) => routesOf[name](shared, hub)),
      { "/openapi.json": { GET: () => jsonResponse(description) } },
    ),
    { logFault: options.logFault, mapError: mapStoreError },
  );
}
