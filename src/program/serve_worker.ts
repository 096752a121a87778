/**
 * One `deno serve` worker's life: start-up, and the stop on SIGINT or SIGTERM.
 * @module
 */

export interface Closable {
  close(): unknown;
}

export interface WorkerLife {
  /** Event streams end, so `deno serve` need not wait for their readers. */
  readonly signal: AbortSignal;
  /** `deno serve` waits for the event loop to empty, which an open connection would prevent forever. */
  closeOnStop(resource: Closable): void;
}

/** Asks `deno serve` for no server. */
export type NoServer = Record<PropertyKey, never>;

const SIGNALS: Deno.Signal[] = ["SIGINT", "SIGTERM"];

/** Listens for signals before starting; stopped meanwhile, it must not exit (docs/architecture.md, "`deno serve` workers"). */
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
