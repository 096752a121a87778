/**
 * The program: reads flags, serves the selected services, and shuts down
 * gracefully on SIGINT or SIGTERM. `deno task start --help` lists the flags.
 * The library lives in `mod.ts`.
 * @module
 */

import { InFlight } from "./src/http/drain.ts";
import {
  type ResilientServer,
  serveResilient,
} from "./src/http/resilient_server.ts";
import { statusResponse } from "./src/http/response.ts";
import {
  type Config,
  parseFlags,
  readEnv,
  USAGE,
  UsageError,
  WATCH_VARIABLE,
} from "./src/program/config.ts";
import { type ProgramLog, programLog } from "./src/program/program_log.ts";
import { setUpProgram } from "./src/program/program.ts";
import { StreamEnded } from "./src/streams/sse_transport.ts";
import { StoreUnavailableError } from "./src/store/store.ts";
import { sleep } from "./src/timers/sleep.ts";

/** How long stopping may take beyond the drain deadline before the process leaves anyway. */
const EXIT_GRACE_MS = 1000;

/**
 * Ends the process with status 0. Under `deno task dev` (`--watch`, which
 * sets `LMS_WATCH=1`) the end of the program would leave Deno's watcher
 * waiting for a file to change, so the watcher is stopped as Ctrl-C would.
 */
function leave(): never {
  if (readEnv(WATCH_VARIABLE) === "1") Deno.kill(Deno.pid, "SIGINT");
  Deno.exit(0);
}

async function serve(config: Config, log: ProgramLog): Promise<void> {
  // Aborted when stopping begins: event streams end, so that shutdown does
  // not wait for their readers.
  const stopping = new AbortController();
  // Aborted at the drain deadline: bodies still arriving are answered 503.
  const deadline = new AbortController();
  const inFlight = new InFlight();
  const program = await setUpProgram(config, log, {
    signal: deadline.signal,
    stopSignal: stopping.signal,
    inFlight,
  });
  // Listen for signals before the banner is printed: a script may send one
  // the moment it reads the banner.
  let stopped: Promise<void> | undefined;
  const down = Promise.withResolvers<void>();
  let storeClosed: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      log.info(
        `Stopping: requests in flight have ${config.drainTimeoutMs} ms to finish`,
      );
      // Whatever clients do, the process is gone soon after the deadline.
      setTimeout(leave, config.drainTimeoutMs + EXIT_GRACE_MS);
      stopping.abort();
      await inFlight.drain(config.drainTimeoutMs);
      deadline.abort();
      // A write still waiting for Redis gives up now, answered 500 (it may have happened).
      storeClosed = program.store.close();
      await inFlight.drain(EXIT_GRACE_MS / 2);
      // Streams ended first; a connection Deno never lets go (a WebSocket it
      // never opened, a reader taking nothing) must not hold the exit.
      await Promise.race([server.shutdown(), sleep(EXIT_GRACE_MS / 2)]);
      down.resolve();
    })();
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  let server: ResilientServer;
  try {
    server = serveResilient({
      port: config.port,
      hostname: config.hostname,
      reusePort: config.reusePort,
      onListen: program.listening,
      onError(error) {
        // A stream ended on purpose (a reader too far behind, or stopping)
        // surfaces here too; it is no fault.
        if (!(error instanceof StreamEnded)) {
          log.fault("unhandled fault:", error);
        }
        return statusResponse(500);
      },
      report: log.report,
    }, program.handler);
  } catch (error) {
    Deno.removeSignalListener("SIGINT", stop);
    Deno.removeSignalListener("SIGTERM", stop);
    throw error;
  }
  await Promise.race([server.finished, down.promise]);
  await (storeClosed ?? program.store.close());
  log.info("Stopped");
}

/** Says why the program cannot start, in one line, and exits; rethrows what it does not know. */
function failStart(config: Config, log: ProgramLog, error: unknown): never {
  const address = `${config.hostname}:${config.port}`;
  if (
    error instanceof Deno.errors.AddrInUse ||
    error instanceof Deno.errors.PermissionDenied
  ) {
    log.error(`error: cannot listen on ${address}: ${error.message}`);
    Deno.exit(1);
  }
  if (
    error instanceof Deno.errors.AddrNotAvailable ||
    (error instanceof Error && error.message.startsWith("failed to lookup"))
  ) {
    log.error(
      `error: --hostname=${config.hostname} is not an address of this machine: ${error.message} (see --help)`,
    );
    Deno.exit(2);
  }
  if (error instanceof StoreUnavailableError) {
    log.error(`error: ${error.message}`);
    Deno.exit(1);
  }
  throw error;
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
    const log = programLog(config.logFormat);
    try {
      await serve(config, log);
      // The signal listeners stay until the end, so a signal repeated while
      // stopping cannot kill the process half-way; exit explicitly instead.
      leave();
    } catch (error) {
      failStart(config, log, error);
    }
  }
}
