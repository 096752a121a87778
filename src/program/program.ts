/**
 * The program's set-up, shared by its two entries: `main.ts`, which runs
 * its own server and drains it on a signal, and `serve.ts`, a worker of
 * `deno serve`. From the options come the program's log, the store, the
 * handler with its request log, and the banner; each entry adds how it
 * listens and stops.
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
import { listeningBanner } from "./listening_banner.ts";
import type { ProgramLog } from "./program_log.ts";

/** How an entry stops the handler: the signals it aborts, and the count of requests it waits for. */
export type StopSignals = Pick<
  HandlerOptions,
  "signal" | "stopSignal" | "inFlight"
>;

/** A program set up and ready to serve. */
export interface Program {
  /** Where state lives; the entry closes it when it stops. */
  readonly store: Store;
  /** Every route the options select, each answer logged unless `--quiet`. */
  readonly handler: Handler;
  /** Writes the request log's lines still waiting (they are also written when the process exits). */
  flushLog(): void;
  /** Prints the banner with the address the server really listens on. */
  listening(addr: Deno.NetAddr): void;
}

/**
 * Opens the store `config` names (throwing `StoreUnavailableError` when
 * it cannot) and builds the handler, stopped by `signals`, telling `log`
 * of faults and of the store's connection.
 */
export async function setUpProgram(
  config: Config,
  log: ProgramLog,
  signals: StopSignals,
): Promise<Program> {
  // The table's names are the options' names: what both take passes as it is.
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
    listening: (addr) => log.info(listeningBanner(addr, config.service)),
  };
}
