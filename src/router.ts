/**
 * Routing as data: a table from path to method to handler. 404, 405 with its
 * `Allow` header, `HEAD` and the mapping of faults to answers all follow from
 * the table, so a service only lists what it serves.
 * @module
 */

import { BodyTooLargeError, errorResponse, statusResponse } from "./http.ts";
import { StoreUnavailableError } from "./store.ts";

/** A service: a plain function from `Request` to `Response`. */
export type Handler = (req: Request) => Response | Promise<Response>;

/** The methods a route may serve; `HEAD` is derived from `GET`. */
export type Method = "GET" | "POST" | "DELETE";

/** The route table: path, then method, then handler. */
export type Routes = Record<string, Partial<Record<Method, Handler>>>;

/** Called with a fault no handler expected, before it is answered 500. */
export type FaultLogger = (error: unknown, req: Request) => void;

interface CompiledRoute {
  methods: Map<string, Handler>;
  allow: string;
}

/** Returns the path of an absolute request URL without building a `URL`. */
export function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start === -1) return "/";
  const query = url.indexOf("?", start);
  return query === -1 ? url.slice(start) : url.slice(start, query);
}

/** `HEAD` answers what `GET` would, headers and body length included, with no body. */
function headOf(get: Handler): Handler {
  return async (req) => {
    const res = await get(req);
    const length = (await res.arrayBuffer()).byteLength;
    const headers = new Headers(res.headers);
    headers.set("content-length", String(length));
    return new Response(null, { status: res.status, headers });
  };
}

function compile(methods: Partial<Record<Method, Handler>>): CompiledRoute {
  const table = new Map<string, Handler>(
    Object.entries(methods) as [Method, Handler][],
  );
  const get = table.get("GET");
  if (get) table.set("HEAD", headOf(get));
  return { methods: table, allow: [...table.keys()].sort().join(", ") };
}

function defaultFaultLogger(error: unknown, req: Request): void {
  console.error(
    `fault in ${req.method} ${pathOf(req.url)}:`,
    error instanceof Error ? error.stack : error,
  );
}

/** Turns a thrown error into the answer the contract gives for it. */
function answerFault(
  error: unknown,
  req: Request,
  logFault: FaultLogger,
): Response {
  if (error instanceof BodyTooLargeError) {
    return errorResponse(
      [{ location: "body", name: "body", description: error.message }],
      413,
    );
  }
  if (error instanceof StoreUnavailableError) return statusResponse(503);
  logFault(error, req);
  return statusResponse(500);
}

/** Options of {@linkcode createRouter}. */
export interface RouterOptions {
  /** Where unexpected faults are reported; the client only ever sees a bare 500. */
  logFault?: FaultLogger;
}

/** Builds one handler from a route table. */
export function createRouter(
  routes: Routes,
  options: RouterOptions = {},
): Handler {
  const logFault = options.logFault ?? defaultFaultLogger;
  const table = new Map<string, CompiledRoute>();
  for (const [path, methods] of Object.entries(routes)) {
    table.set(path, compile(methods));
  }
  const notFound = () => statusResponse(404);
  const fail = (error: unknown, req: Request) =>
    answerFault(error, req, logFault);
  return (req) => {
    const route = table.get(pathOf(req.url));
    if (route === undefined) return notFound();
    const handler = route.methods.get(req.method);
    if (handler === undefined) {
      return statusResponse(405, { allow: route.allow });
    }
    try {
      const res = handler(req);
      return res instanceof Promise ? res.catch((e) => fail(e, req)) : res;
    } catch (error) {
      return fail(error, req);
    }
  };
}
