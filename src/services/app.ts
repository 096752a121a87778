/**
 * Composition: which services one handler serves, over one shared store,
 * with their OpenAPI description at `/openapi.json`, the chat page beside
 * messaging, the operator's routes (`/healthz`, `/readyz`, `/metrics`), and
 * the origins allowed to call them.
 * @module
 */

import {
  createRouter,
  type FaultLogger,
  type Handler,
  mergeRoutes,
} from "../http/router.ts";
import { withCors } from "../http/cors.ts";
import { jsonResponse } from "../http/response.ts";
import { openApiDocument } from "../openapi/openapi_document.ts";
import { MemoryStore } from "../store/memory_store.ts";
import { StoreUnavailableError } from "../store/store.ts";
import { messagingRoutes } from "./messaging.ts";
import { quoteRoutes } from "./quote.ts";
import { type ServiceOptions, streamHubOf } from "./service_options.ts";
import { type ServiceSelection, servicesOf } from "./service_names.ts";
import { mapStoreError } from "./store_errors.ts";
import { chatPageRoutes } from "../web/chat_page.ts";
import { Metrics, withMetrics } from "../operations/metrics.ts";
import { operationRoutes } from "../operations/operation_routes.ts";

/**
 * Options of {@linkcode createHandler}.
 *
 * @example Both services over one store
 * ```ts
 * import { createHandler, type HandlerOptions, MemoryStore } from "@lms/light-messaging";
 * const options: HandlerOptions = {
 *   service: "all",
 *   store: new MemoryStore({ history: 50 }),
 *   corsOrigins: ["https://example.org"],
 * };
 * createHandler(options);
 * ```
 */
export interface HandlerOptions extends ServiceOptions {
  /** Which services to serve. Default `all`. */
  service?: ServiceSelection;
  /** Where unexpected faults are reported; the client only ever sees a bare 500. Default: standard error, with the stack. */
  logFault?: FaultLogger;
  /**
   * Origins whose pages may call every route (CORS), exactly as browsers
   * send them (`https://example.org`), or `*` for any. Default: none.
   */
  corsOrigins?: readonly string[];
}

const routesOf = { messaging: messagingRoutes, quote: quoteRoutes };

/**
 * Builds one handler serving the selected services over one shared store,
 * their OpenAPI description at `/openapi.json`, and `/healthz`, `/readyz`
 * and `/metrics` for whoever runs it.
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
  const description = JSON.stringify(openApiDocument(services));
  // One hub, so the stream cap counts every stream of the process.
  const hub = streamHubOf(shared);
  const metrics = new Metrics();
  let storeFailures = 0;
  const routes = mergeRoutes(
    ...services.map((name) => routesOf[name](shared, hub)),
    services.includes("messaging")
      ? chatPageRoutes({ quote: services.includes("quote") })
      : {},
    { "/openapi.json": { GET: () => jsonResponse(description) } },
    operationRoutes({
      store: shared.store,
      hub,
      metrics,
      storeFailures: () => storeFailures,
    }),
  );
  metrics.track(Object.keys(routes));
  const router = createRouter(routes, {
    logFault: options.logFault,
    mapError(error) {
      if (error instanceof StoreUnavailableError) storeFailures++;
      return mapStoreError(error);
    },
  });
  return withMetrics(
    withCors(router, routes, options.corsOrigins ?? []),
    metrics,
  );
}
