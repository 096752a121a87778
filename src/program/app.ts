/**
 * Composes the selected services, the chat page, `/openapi.json` and the operator's routes into one
 * handler over one store, so one stream cap and one presence tracker cover the process.
 * @module
 */

import {
  createRouter,
  defaultFaultLogger,
  type FaultLogger,
  type Handler,
  mergeRoutes,
} from "../http/router.ts";
import { withCors } from "../http/cors.ts";
import type { InFlight } from "../http/drain.ts";
import { precompressed } from "../http/compression.ts";
import { JSON_CONTENT_TYPE, statusResponse } from "../http/response.ts";
import {
  observeResponses,
  type ResponseObserver,
} from "../http/observe_responses.ts";
import { openApiDocument } from "../openapi/openapi_document.ts";
import { MemoryStore } from "../store/memory_store.ts";
import { StoreUnavailableError } from "../store/store.ts";
import { messagingRoutes } from "../services/messaging.ts";
import { quoteRoutes } from "../services/quote.ts";
import {
  type ServiceOptions,
  streamHubOf,
} from "../services/service_options.ts";
import {
  type ServiceSelection,
  servicesOf,
} from "../services/service_names.ts";
import { mapStoreError } from "../services/store_errors.ts";
import { chatPageRoutes } from "../web/chat_page.ts";
import { Metrics } from "../operations/metrics.ts";
import type { AuthOutcome } from "../auth/guesses.ts";
import { operationRoutes } from "../operations/operation_routes.ts";

/**
 * Options of {@linkcode createHandler}.
 *
 * @example Both services over one store
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler, type HandlerOptions, MemoryStore } from "@lms/light-messaging";
 * const store = new MemoryStore({ history: 50 });
 * const options: HandlerOptions = {
 *   service: "all",
 *   store,
 *   corsOrigins: ["https://example.org"],
 * };
 * const handler = createHandler(options);
 * const res = await handler(new Request("http://localhost/quote", {
 *   method: "POST",
 *   headers: { origin: "https://example.org" },
 *   body: "Shared.",
 * }));
 * assert.equal(res.headers.get("access-control-allow-origin"), "https://example.org");
 * assert.equal(await store.getQuote(), "Shared.");
 * ```
 */
export interface HandlerOptions extends ServiceOptions {
  /** Which services to serve. Default `all`. */
  service?: ServiceSelection;
  /** The client only ever sees a bare 500. Default: standard error, with the stack. */
  logFault?: FaultLogger;
  /** The request log; it runs on the request path, so it should note what it needs and write later. */
  onResponse?: ResponseObserver;
  /** So that shutdown can wait for the requests in flight. */
  inFlight?: InFlight;
}

const routesOf = { messaging: messagingRoutes, quote: quoteRoutes };

/**
 * One handler for the selected services over one store, with `/openapi.json` and the operator's routes.
 *
 * @example Mounting both services in Deno.serve
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler } from "@lms/light-messaging";
 * const handler = createHandler({ service: "all" });
 * const res = await handler(new Request("http://localhost/"));
 * assert.equal(res.status, 200);
 * assert.deepEqual(await res.json(), []);
 * // `Deno.serve(handler)` serves it; here on a free port, stopped at the end.
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
 * const quote = await fetch(`http://127.0.0.1:${server.addr.port}/quote`);
 * assert.equal(quote.status, 200);
 * await quote.body?.cancel();
 * ```
 */
export function createHandler(options: HandlerOptions = {}): Handler {
  const authOutcomes = { failed: 0, refused: 0 };
  const shared = {
    ...options,
    store: options.store ?? new MemoryStore(),
    onAuthOutcome(outcome: AuthOutcome) {
      authOutcomes[outcome]++;
      options.onAuthOutcome?.(outcome);
    },
  };
  const services = servicesOf(options.service ?? "all");
  // About 50 KB that never changes: compressed once, when first asked for.
  const description = precompressed(
    JSON.stringify(openApiDocument(services)),
    { "content-type": JSON_CONTENT_TYPE },
  );
  // One hub, so the stream cap counts every stream of the process.
  const hub = streamHubOf(shared);
  const metrics = new Metrics();
  let storeFailures = 0;
  const routes = mergeRoutes(
    ...services.map((name) => routesOf[name](shared, hub)),
    services.includes("messaging")
      ? chatPageRoutes({ quote: services.includes("quote") })
      : {},
    { "/openapi.json": { GET: description } },
    operationRoutes({
      store: shared.store,
      hub,
      metrics,
      storeFailures: () => storeFailures,
      authOutcomes,
    }),
  );
  metrics.track(Object.keys(routes));
  const logFault = options.logFault ?? defaultFaultLogger;
  const router = createRouter(routes, {
    logFault,
    mapError(error) {
      if (error instanceof StoreUnavailableError) storeFailures++;
      return mapStoreError(error);
    },
  });
  const served = withCors(router, routes, options.corsOrigins ?? []);
  // Once stopping, new requests go elsewhere (still counted and logged); those in flight finish.
  const refusing: Handler = (req, info) =>
    options.stopSignal?.aborted
      ? statusResponse(503, { connection: "close", "retry-after": "1" })
      : served(req, info);
  return observeResponses(refusing, (req, res, ms, info) => {
    metrics.observe(req, res.status, ms / 1000);
    try {
      options.onResponse?.(req, res, ms, info);
    } catch (error) {
      // Thrown past the answer, it would reach Deno, which stops listening after a WebSocket's.
      logFault(error, req);
    }
  }, options.inFlight);
}
