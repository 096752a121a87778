/**
 * The set-up `main.ts` and `serve.ts` share; each entry adds how it listens and stops.
 * @module
 */

import { clientAddressOf } from "../http/client_address.ts";
import { bufferedSink, requestLogger } from "../http/request_log.ts";
import { requestPath } from "../http/request_path.ts";
import type { Handler } from "../http/router.ts";
import { createHandler, type HandlerOptions } from "./app.ts";
import { openStore } from "./open_store.ts";
import type { Store } from "../store/store.ts";
import type { Config } from "./config.ts";
import { servicesOf } from "../services/service_names.ts";
import type { ProgramLog } from "./program_log.ts";

export interface Program {
  /** The entry closes it when it stops. */
  readonly store: Store;
  readonly handler: Handler;
  /** Lines still waiting are also written when the process exits. */
  flushLog(): void;
  /** With the address the server really listens on. */
  listening(addr: Deno.NetAddr): void;
}

/** Opens the store (or throws `StoreUnavailableError`) and builds the handler. */
export async function setUpProgram(
  config: Config,
  log: ProgramLog,
  signals: Pick<HandlerOptions, "signal" | "stopSignal" | "inFlight">,
): Promise<Program> {
  const store = await openStore({ ...config, onStatus: log.report });
  const clientOf = clientAddressOf(config);
  const sink = config.quiet ? undefined : bufferedSink();
  const handler = createHandler({
    ...config,
    ...signals,
    store,
    webSockets: config.websocket === "on",
    clientOf,
    logFault: (error, req) =>
      log.fault(`fault in ${req.method} ${requestPath(req)}:`, error),
    onResponse: sink &&
      requestLogger(sink, { format: config.logFormat, clientOf }),
  });
  return {
    store,
    handler,
    flushLog: () => sink?.flush(),
    // The first line the program prints, which scripts and tests wait for.
    listening({ hostname, port }) {
      const host = hostname.includes(":") ? `[${hostname}]` : hostname;
      const services = servicesOf(config.service).join(", ");
      log.banner(
        `Listening on http://${host}:${port}/ (services: ${services})`,
      );
    },
  };
}
