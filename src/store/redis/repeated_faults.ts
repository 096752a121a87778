/**
 * A fault that repeats (every write refused while Redis is out of memory) is logged once per window.
 * @module
 */

/** Logs a kind's first report at once, and how many more came when its window ends (or on `close`). */
export function repeatedFaults(
  log: (line: string) => void,
  windowMs: number,
) {
  const open = new Map<
    string,
    { message: string; more: number; timer: ReturnType<typeof setTimeout> }
  >();
  const flush = (kind: string) => {
    const entry = open.get(kind);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    open.delete(kind);
    if (entry.more > 0) {
      log(
        `${entry.message} (${entry.more} more times in ${windowMs / 1000} s)`,
      );
    }
  };
  return {
    report(kind: string, message: string): void {
      const entry = open.get(kind);
      if (entry !== undefined) {
        entry.more++;
        return;
      }
      log(message);
      const timer = setTimeout(() => flush(kind), windowMs);
      // A log line to come is no reason to keep the process alive.
      Deno.unrefTimer(timer);
      open.set(kind, { message, more: 0, timer });
    },
    close(): void {
      for (const kind of [...open.keys()]) flush(kind);
    },
  };
}
