/**
 * Routing as data: 404, 405 with `Allow`, `HEAD` and fault answers follow from the table.
 * @module
 */

import { compressJson } from "./compression.ts";
import { HttpError } from "./http_error.ts";
import { requestPath } from "./request_path.ts";
import { statusResponse } from "./response.ts";

/**
 * A service: a plain function from `Request` to `Response`.
 *
 * @example Serving a handler
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler, type Handler } from "@lms/light-messaging";
 * const handler: Handler = createHandler({ service: "quote" });
 * const res = await handler(new Request("http://localhost/quote"));
 * assert.equal(res.status, 200);
 * assert.equal(typeof await res.json(), "string");
 * ```
 */
export type Handler = (
  req: Request,
  info?: ConnectionInfo,
) => Response | Promise<Response>;

/**
 * What the server knows of a request's connection (`Deno.serve`'s info fits);
 * a handler called directly may leave it out.
 *
 * @example Calling a handler as `Deno.serve` would
 * ```ts
 * import assert from "node:assert/strict";
 * import { type ConnectionInfo, createHandler } from "@lms/light-messaging";
 * // The connection tells clients apart: one write each per minute here.
 * const handler = createHandler({ rateLimit: { burst: 1, periodMs: 60_000 } });
 * const from = (hostname: string): ConnectionInfo => ({
 *   remoteAddr: { transport: "tcp", hostname, port: 50000 },
 * });
 * const post = (body: string, info: ConnectionInfo) =>
 *   handler(new Request("http://localhost/quote", { method: "POST", body }), info);
 * assert.equal((await post("First.", from("192.0.2.7"))).status, 200);
 * assert.equal((await post("Second.", from("192.0.2.7"))).status, 429);
 * assert.equal((await post("Third.", from("192.0.2.8"))).status, 200);
 * ```
 */
export interface ConnectionInfo {
  /** The peer's address; for TCP, `hostname` is its IP address. */
  readonly remoteAddr: Deno.Addr;
  /** Settles once the answer is delivered or the connection is gone, as `Deno.serve` tells it. */
  readonly completed?: Promise<void>;
}

/** `HEAD` is derived from `GET` unless the route gives its own (an endless stream must). */
export type Method = "GET" | "HEAD" | "POST" | "DELETE";

export type Routes = Record<string, Partial<Record<Method, Handler>>>;

/**
 * Called with a fault no handler expected, before it is answered 500.
 *
 * @example Counting faults
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler, type FaultLogger, MemoryStore } from "@lms/light-messaging";
 * const store = new MemoryStore();
 * store.getQuote = () => {
 *   throw new Error("a bug");
 * };
 * const faults: string[] = [];
 * const logFault: FaultLogger = (error, req) =>
 *   faults.push(`${req.method} ${new URL(req.url).pathname}: ${error}`);
 * const handler = createHandler({ logFault, store });
 * const res = await handler(new Request("http://localhost/quote"));
 * assert.deepEqual(await res.json(), { status: 500, message: "Internal Server Error" });
 * assert.deepEqual(faults, ["GET /quote: Error: a bug"]);
 * ```
 */
export type FaultLogger = (error: unknown, req: Request) => void;

interface CompiledRoute {
  methods: Map<string, Handler>;
  allow: string;
}

function headOf(get: Handler): Handler {
  return async (req, info) => {
    const res = await get(req, info);
    const length = (await res.arrayBuffer()).byteLength;
    const headers = new Headers(res.headers);
    headers.set("content-length", String(length));
    return new Response(null, { status: res.status, headers });
  };
}

export function allowedMethods(
  methods: Partial<Record<Method, Handler>>,
): string {
  const names = new Set(Object.keys(methods));
  if (names.has("GET")) names.add("HEAD");
  return [...names].sort().join(", ");
}

function compile(methods: Partial<Record<Method, Handler>>): CompiledRoute {
  // A route's own HEAD (an endless stream's) is left as it is; the derived
  // one measures the compressed GET, so both carry the same headers.
  const table = new Map<string, Handler>(
    (Object.entries(methods) as [Method, Handler][]).map((
      [method, handler],
    ) => [method, method === "HEAD" ? handler : compressJson(handler)]),
  );
  const get = table.get("GET");
  if (get && !table.has("HEAD")) table.set("HEAD", headOf(get));
  return { methods: table, allow: allowedMethods(methods) };
}

/** The fault and its stack on standard error: the client only ever sees a bare 500. */
export function defaultFaultLogger(error: unknown, req: Request): void {
  console.error(
    `fault in ${req.method} ${requestPath(req)}:`,
    error instanceof Error ? error.stack : error,
  );
}

export interface RouterOptions {
  /** The client only ever sees a bare 500. */
  logFault?: FaultLogger;
  /** For errors of other layers that are not faults (an unreachable store); `undefined`: a fault. */
  mapError?: (error: unknown) => Response | undefined;
}

/** A path served twice is a mistake, not an override: it throws. */
export function mergeRoutes(...tables: Routes[]): Routes {
  const merged: Routes = {};
  for (const table of tables) {
    for (const [path, methods] of Object.entries(table)) {
      if (Object.hasOwn(merged, path)) {
        throw new Error(`two services serve the path ${path}`);
      }
      merged[path] = methods;
    }
  }
  return merged;
}

export function createRouter(
  routes: Routes,
  options: RouterOptions = {},
): Handler {
  const logFault = options.logFault ?? defaultFaultLogger;
  const table = new Map<string, CompiledRoute>();
  for (const [path, methods] of Object.entries(routes)) {
    table.set(path, compile(methods));
  }
  const fail = (error: unknown, req: Request): Response => {
    if (error instanceof HttpError) return error.getResponse();
    const mapped = options.mapError?.(error);
    if (mapped !== undefined) return mapped;
    logFault(error, req);
    return statusResponse(500);
  };
  return (req, info) => {
    const route = table.get(requestPath(req));
    if (route === undefined) return statusResponse(404);
    const handler = route.methods.get(req.method);
    if (handler === undefined) {
      return statusResponse(405, { allow: route.allow });
    }
    try {
      const res = handler(req, info);
      return res instanceof Promise ? res.catch((e) => fail(e, req)) : res;
    } catch (error) {
      return fail(error, req);
    }
  };
}
