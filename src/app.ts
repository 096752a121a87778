/**
 * Composition: which services one handler serves. Their paths do not
 * overlap, so their route tables merge into one.
 * @module
 */

import { MemoryStore } from "./memory_store.ts";
import { encodeJson, jsonResponse } from "./http.ts";
import { messagingRoutes } from "./messaging.ts";
import { openApiDocument } from "./openapi.ts";
import type { ServiceOptions } from "./options.ts";
import { quoteRoutes } from "./quote.ts";
import { createRouter, type Handler, type RouterOptions } from "./router.ts";

/** One service by name. */
export type ServiceName = "messaging" | "quote";

/** The services a process can serve. */
export const SERVICES: readonly ServiceName[] = ["messaging", "quote"];

/** What `--service` selects: one service or `all`. */
export type ServiceSelection = ServiceName | "all";

/** Options of {@linkcode createHandler}. */
export interface HandlerOptions extends ServiceOptions, RouterOptions {
  /** Which services to serve. Default `all`. */
  service?: ServiceSelection;
}

/** The service names a selection stands for. */
export function servicesOf(selection: ServiceSelection): ServiceName[] {
  return selection === "all" ? [...SERVICES] : [selection];
}

/** The first line the program prints, which scripts wait for: `Listening on http://HOST:PORT/ (services: ...)`. */
export function listeningBanner(
  { hostname, port }: Deno.NetAddr,
  selection: ServiceSelection,
): string {
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return `Listening on http://${host}:${port}/ (services: ${
    servicesOf(selection).join(", ")
  })`;
}

const routesOf = { messaging: messagingRoutes, quote: quoteRoutes };

/** Builds one handler serving the selected services over one shared store, and their OpenAPI description at `/openapi.json`. */
export function createHandler(options: HandlerOptions = {}): Handler {
  const shared = { ...options, store: options.store ?? new MemoryStore() };
  const services = servicesOf(options.service ?? "all");
  const description = encodeJson(openApiDocument(services));
  return createRouter(
    Object.assign(
      {},
      ...services.map((name) => routesOf[name](shared)),
      { "/openapi.json": { GET: () => jsonResponse(description) } },
    ),
    options,
  );
}
