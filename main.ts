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

import { createHandler, listeningBanner } from "./src/app.ts";
import {
  type Config,
  parseFlags,
  readEnv,
  USAGE,
  UsageError,
} from "./src/config.ts";
import { statusResponse } from "./src/http.ts";
import { openStore } from "./src/open_store.ts";
import type { Handler } from "./src/router.ts";
import { withRequestLog } from "./src/request_log.ts";
import { type Store, StoreUnavailableError } from "./src/store.ts";

export {
  createHandler,
  type HandlerOptions,
  type ServiceName,
  type ServiceSelection,
} from "./src/app.ts";
export {
  type ClientOptions,
  type ErrorEntry,
  type ErrorLocation,
  type Message,
  MessagingClient,
  QuoteClient,
  ServiceError,
} from "./src/client.ts";
export { JSON_CONTENT_TYPE } from "./src/http.ts";
export { type JsonObject, openApiDocument } from "./src/openapi.ts";
export { createMessagingService } from "./src/messaging.ts";
export { createQuoteService } from "./src/quote.ts";
export { MemoryStore } from "./src/memory_store.ts";
export { RedisStore, type RedisStoreOptions } from "./src/redis_store.ts";
export { openStore, type OpenStoreOptions } from "./src/open_store.ts";
export type { ServiceOptions } from "./src/options.ts";
export type { FaultLogger, Handler, RouterOptions } from "./src/router.ts";
export type {
  Awaitable,
  RegisterResult,
  Store,
  StoreLimits,
} from "./src/store.ts";
export { StoreUnavailableError };

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
      onListen(addr) {
        console.log(listeningBanner(addr, config.service));
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
      await serve(config, await openStore(config));
      // The signal listeners stay until the end, so a signal repeated while
      // stopping cannot kill the process half-way; exit explicitly instead.
      Deno.exit(0);
    } catch (error) {
      if (error instanceof Deno.errors.AddrInUse) {
        console.error(
          `error: cannot listen on ${config.hostname}:${config.port}: ${error.message}`,
        );
        Deno.exit(1);
      }
      if (error instanceof StoreUnavailableError) {
        console.error(`error: ${error.message}`);
        Deno.exit(1);
      }
      throw error;
    }
  }
}
