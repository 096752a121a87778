/**
 * A light messaging service and a quote service: two tiny JSON-over-HTTP
 * services, each a plain `(req: Request) => Response` handler.
 *
 * As a library:
 *
 * ```ts
 * import { createMessagingService, createQuoteService } from "./main.ts";
 * Deno.serve(createMessagingService());
 * ```
 *
 * As a program: `deno task start --help`.
 * @module
 */

import { parseArgs } from "node:util";
import { createHandler, type ServiceSelection, servicesOf } from "./src/app.ts";
import { statusResponse } from "./src/http.ts";
import { MemoryStore } from "./src/memory_store.ts";
import { DEFAULT_MAX_BODY_BYTES } from "./src/options.ts";
import { type Handler, pathOf } from "./src/router.ts";
import { DEFAULT_LIMITS, type Store } from "./src/store.ts";

export {
  createHandler,
  type HandlerOptions,
  type ServiceName,
  type ServiceSelection,
} from "./src/app.ts";
export { JSON_CONTENT_TYPE } from "./src/http.ts";
export { createMessagingService } from "./src/messaging.ts";
export { createQuoteService } from "./src/quote.ts";
export { MemoryStore } from "./src/memory_store.ts";
export type { ServiceOptions } from "./src/options.ts";
export type { FaultLogger, Handler, RouterOptions } from "./src/router.ts";
export {
  type Awaitable,
  type RegisterResult,
  type Store,
  type StoreLimits,
  StoreUnavailableError,
} from "./src/store.ts";

const USAGE = `Usage: deno task start [flags]

Serves the messaging service (/users, /) and the quote service (/quote).

Flags:
  --service=all|messaging|quote  which services to serve (default: all)
  --port=N            port to listen on; 0 picks a free one (default: $PORT, else 8000)
  --hostname=H        address to listen on (default: 0.0.0.0)
  --max-body-bytes=N  largest request body read, in bytes (default: ${DEFAULT_MAX_BODY_BYTES})
  --history=N         messages kept, at least 5 (default: ${DEFAULT_LIMITS.history})
  --max-users=N       users registered at once (default: ${DEFAULT_LIMITS.maxUsers})
  --quiet             no request log on standard error
  --help              show this help and exit
`;

interface Config {
  service: ServiceSelection;
  port: number;
  hostname: string;
  maxBodyBytes: number;
  history: number;
  maxUsers: number;
  quiet: boolean;
  help: boolean;
}

/** A flag or value the program cannot start with; exits 2. */
class UsageError extends Error {}

function wholeNumber(
  flag: string,
  raw: string,
  min: number,
  max: number,
): number {
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max)) {
    throw new UsageError(
      `${flag} must be a whole number from ${min} to ${max} (got "${raw}")`,
    );
  }
  return value;
}

function parseFlags(
  args: string[],
  env: (name: string) => string | undefined,
): Config {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      strict: true,
      allowPositionals: false,
      options: {
        service: { type: "string", default: "all" },
        port: { type: "string" },
        hostname: { type: "string", default: "0.0.0.0" },
        "max-body-bytes": {
          type: "string",
          default: String(DEFAULT_MAX_BODY_BYTES),
        },
        history: { type: "string", default: String(DEFAULT_LIMITS.history) },
        "max-users": {
          type: "string",
          default: String(DEFAULT_LIMITS.maxUsers),
        },
        quiet: { type: "boolean", default: false },
        help: { type: "boolean", default: false },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const service = values.service;
  if (service !== "all" && service !== "messaging" && service !== "quote") {
    throw new UsageError(
      `--service must be all, messaging or quote (got "${service}")`,
    );
  }
  if (values.hostname === "") throw new UsageError("--hostname is empty");
  const envPort = values.port === undefined ? env("PORT") : undefined;
  const port = values.port !== undefined
    ? wholeNumber("--port", values.port, 0, 65535)
    : envPort
    ? wholeNumber("PORT", envPort, 0, 65535)
    : 8000;
  return {
    service,
    port,
    hostname: values.hostname,
    maxBodyBytes: wholeNumber(
      "--max-body-bytes",
      values["max-body-bytes"],
      1,
      2 ** 30,
    ),
    history: wholeNumber("--history", values.history, 5, 10_000_000),
    maxUsers: wholeNumber("--max-users", values["max-users"], 1, 100_000_000),
    quiet: values.quiet,
    help: values.help,
  };
}

/** Wraps `handler` to log one line per request: method, path, status, milliseconds. */
function withRequestLog(handler: Handler): Handler {
  return async (req) => {
    const start = performance.now();
    const res = await handler(req);
    const ms = (performance.now() - start).toFixed(2);
    // The path only: the query is the client's business, and the token
    // travels in a header, which is never logged.
    console.error(`${req.method} ${pathOf(req.url)} ${res.status} ${ms}ms`);
    return res;
  };
}

/** An environment variable, or `undefined` when unset or not permitted. */
function readEnv(name: string): string | undefined {
  const state = Deno.permissions.querySync({ name: "env", variable: name });
  return state.state === "granted" ? Deno.env.get(name) : undefined;
}

/** How long shutdown waits for requests in flight before closing anyway. */
const DRAIN_TIMEOUT_MS = 10_000;

/**
 * Counts requests in flight so shutdown can wait for them itself. Deno 2.9's
 * `server.shutdown()` makes the unread body of a request in flight fail
 * (denoland/deno#36809), so the server is shut down only once the handlers
 * are done; meanwhile new requests are told to go elsewhere.
 */
function drainable(handler: Handler) {
  let inFlight = 0;
  let draining = false;
  let idle = () => {};
  const done = () => {
    if (--inFlight === 0) idle();
  };
  const tracked: Handler = (req) => {
    if (draining) return statusResponse(503, { connection: "close" });
    inFlight++;
    let res;
    try {
      res = handler(req);
    } catch (error) {
      done();
      throw error;
    }
    // Observe the answer rather than wrap it: one promise fewer per request.
    if (res instanceof Promise) res.then(done, done);
    else done();
    return res;
  };
  const drain = () => {
    draining = true;
    if (inFlight === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, DRAIN_TIMEOUT_MS);
      idle = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  };
  return { handler: tracked, drain };
}

function urlHost(hostname: string): string {
  return hostname.includes(":") ? `[${hostname}]` : hostname;
}

async function serve(config: Config, store: Store): Promise<void> {
  const app = createHandler({
    service: config.service,
    store,
    maxBodyBytes: config.maxBodyBytes,
  });
  const { handler, drain } = drainable(
    config.quiet ? app : withRequestLog(app),
  );
  // Listen for signals before the banner is printed: a script may send one
  // the moment it reads the banner.
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= drain().then(() => server.shutdown());
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  let server: Deno.HttpServer;
  try {
    server = Deno.serve({
      port: config.port,
      hostname: config.hostname,
      onListen({ hostname, port }) {
        console.log(
          `Listening on http://${urlHost(hostname)}:${port}/ (services: ${
            servicesOf(config.service).join(", ")
          })`,
        );
      },
      onError(error) {
        console.error("unhandled fault:", error);
        return statusResponse(500);
      },
    }, handler);
  } catch (error) {
    Deno.removeSignalListener("SIGINT", stop);
    Deno.removeSignalListener("SIGTERM", stop);
    throw error;
  }
  await server.finished;
  await store.close();
}

if (import.meta.main) {
  let config: Config;
  try {
    config = parseFlags(Deno.args, readEnv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`error: ${error.message} (see --help)`);
    Deno.exit(2);
  }
  if (config.help) {
    console.log(USAGE);
  } else {
    try {
      await serve(
        config,
        new MemoryStore({ history: config.history, maxUsers: config.maxUsers }),
      );
      // The signal listeners stay until the end, so a signal repeated while
      // stopping cannot kill the process half-way; exit explicitly instead.
      Deno.exit(0);
    } catch (error) {
      if (!(error instanceof Deno.errors.AddrInUse)) throw error;
      console.error(
        `error: cannot listen on ${config.hostname}:${config.port}: ${error.message}`,
      );
      Deno.exit(1);
    }
  }
}
