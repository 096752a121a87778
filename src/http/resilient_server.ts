/**
 * `Deno.serve` stops listening for good when accept fails (out of file descriptors), or when a
 * handler throws after a WebSocket upgrade, so this listens again after a pause, serving the
 * connections it has meanwhile.
 * @module
 */

import type { Handler } from "./router.ts";
import { sleep } from "../timers/sleep.ts";

export interface ResilientServeOptions {
  hostname: string;
  port: number;
  /** Share the port with other processes that ask the same (Linux `SO_REUSEPORT`). */
  reusePort?: boolean;
  onListen(addr: Deno.NetAddr): void;
  /** Never expected. */
  onError(error: unknown): Response;
  /** Told when accepting fails and when listening resumes. */
  report(message: string, level: "error" | "info"): void;
}

/** A server made of successive listeners on one address. */
export interface ResilientServer {
  /** The real port when asked for 0. */
  readonly addr: Deno.NetAddr;
  readonly finished: Promise<void>;
  shutdown(): Promise<void>;
}

const FIRST_RETRY_MS = 100;
const LAST_RETRY_MS = 1000;

/** Throws when the first listen fails. */
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
  const stop = new AbortController();

  const finished = (async () => {
    while (!stop.signal.aborted) {
      // Deno 2.9 also stops, without an error, when a handler throws after a WebSocket upgrade.
      let why = "the listener stopped";
      try {
        await current.finished;
      } catch (error) {
        why = (error as Error).message;
      }
      if (stop.signal.aborted) return;
      options.report(
        `accepting connections failed (${why}); serving open connections, listening again shortly`,
        "error",
      );
      for (
        let wait = FIRST_RETRY_MS;
        !stop.signal.aborted;
        wait = Math.min(wait * 2, LAST_RETRY_MS)
      ) {
        await sleep(wait, stop.signal);
        if (stop.signal.aborted) return;
        try {
          current = listen(addr.port, () => {});
          options.report(`listening again on port ${addr.port}`, "info");
          break;
        } catch {
          // Still out of descriptors, or the port is briefly taken.
        }
      }
    }
  })();

  return {
    addr,
    finished,
    async shutdown() {
      stop.abort();
      await Promise.allSettled([...servers].map((server) => server.shutdown()));
      await finished;
    },
  };
}
