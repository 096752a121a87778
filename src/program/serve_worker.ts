/**
 * One `deno serve` worker's life: start-up, and the stop on SIGINT or
 * SIGTERM, which `deno serve` only handles once the module has given it a
 * server.
 * @module
 */

/** Something to close when the worker stops. */
export interface Closable {
  close(): unknown;
}

/** What a worker's start-up is given. */
export interface WorkerLife {
  /** Aborted on SIGINT or SIGTERM: event streams end, so `deno serve` need not wait for their readers. */
  readonly signal: AbortSignal;
  /** Closes `resource` when the worker stops, since `deno serve` waits for the event loop to empty, which an open connection would prevent forever. */
  closeOnStop(resource: Closable): void;
}

/** The default export of a worker stopped before it started: it asks `deno serve` for no server. */
export type NoServer = Record<PropertyKey, never>;

const SIGNALS: Deno.Signal[] = ["SIGINT", "SIGTERM"];

/**
 * Runs `start` and gives what `deno serve` should serve. Listens for the
 * signals first: until this module is evaluated `deno serve` has no server
 * to stop and does not hear them.
 *
 * A worker that hears one while still starting finishes its start-up, then
 * closes what it opened and asks for no server, so it ends with the others.
 * It must not end the process: `self.close()` in a `deno serve` worker is
 * `Deno.exit(0)`, which would cut short the workers that did start (their
 * requests in flight, and the log lines they have not yet written). When
 * that worker is the first, `deno serve` then prints that it "requires
 * export default { fetch }", and still exits 0.
 */
export async function startServeWorker(
  start: (life: WorkerLife) => Promise<Deno.ServeDefaultExport>,
): Promise<Deno.ServeDefaultExport | NoServer> {
  const stopping = new AbortController();
  const resources: Closable[] = [];
  const closeAll = () => {
    for (const resource of resources.splice(0)) resource.close();
  };
  const stop = () => {
    stopping.abort();
    closeAll();
    for (const signal of SIGNALS) Deno.removeSignalListener(signal, stop);
  };
  for (const signal of SIGNALS) Deno.addSignalListener(signal, stop);
  const served = await start({
    signal: stopping.signal,
    closeOnStop: (resource) => resources.push(resource),
  });
  if (!stopping.signal.aborted) return served;
  closeAll();
  return {};
}
