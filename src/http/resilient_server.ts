/**
 * `Deno.serve` that outlives a failing accept. When the process runs out of
 * file descriptors, Deno's accept loop fails and the server stops listening
 * for good, and its `finished` rejects (which would end the process). The
 * connections it already has keep being served, so this listens again after
 * a pause, shedding new connections only while the limit is reached.
 * @module
 */

import type { Handler } from "./router.ts";

/** Options of {@linkcode serveResilient}. */
export interface ResilientServeOptions {
  hostname: string;
  port: number;
  /** Share the port with other processes that ask the same (Linux `SO_REUSEPORT`). */
  reusePort?: boolean;
  /** Called once, when the first listener is bound. */
  onListen(addr: Deno.NetAddr): void;
  /** Answers a handler that throws; never expected. */
  onError(error: unknown): Response;
  /** Told when accepting failed (`error`) and when listening resumes (`info`). */
  report(message: string, level: "error" | "info"): void;
}

/** A server made of successive listeners on one address. */
export interface ResilientServer {
  /** The bound address (the real port when asked for 0). */
  readonly addr: Deno.NetAddr;
  /** Settles when the server has been shut down. */
  readonly finished: Promise<void>;
  /** Stops listening and closes every listener's connections gracefully. */
  shutdown(): Promise<void>;
}

const FIRST_RETRY_MS = 100;
const LAST_RETRY_MS = 1000;

/** Serves `handler`, listening again whenever accepting fails. Throws when the first listen fails. */
export function serveResilient(
  options: ResilientServeOptions,
  handler: Handler,
): ResilientServer {
  const servers = new Set<Deno.HttpServer<Deno.NetAddr>>();
  const listen = (port: number, onListen: (addr: Deno.NetAddr) => void) => {
    const server = Deno.serve({
      hostname: options.hostname,
      port,
      reusePort: options.reusePort,
      onListen,
      onError: options.onError,
    }, handler);
    servers.add(server);
    return server;
  };
  let current = listen(options.port, options.onListen);
  const addr = current.addr;
  let stopping = false;
  let wake = () => {};
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const finished = (async () => {
    while (!stopping) {
      try {
        await current.finished;
        return;
      } catch (error) {
        if (stopping) return;
        options.report(
          `accepting connections failed (${
            (error as Error).message
          }); serving open connections, listening again shortly`,
          "error",
        );
      }
      // Each pass waits, so this loop is bounded by time until stopped.
      for (
        let wait = FIRST_RETRY_MS;
        !stopping;
        wait = Math.min(wait * 2, LAST_RETRY_MS)
      ) {
        await pause(wait);
        if (stopping) return;
        try {
          current = listen(addr.port, () => {});
          options.report(`listening again on port ${addr.port}`, "info");
          break;
        } catch {
          // Still out of descriptors (or the port is briefly taken): wait more.
        }
      }
    }
  })();

  return {
    addr,
    finished,
    async shutdown() {
      stopping = true;
      wake();
      await Promise.allSettled([...servers].map((server) => server.shutdown()));
      await finished;
    },
  };
}
