/**
 * A fault that repeats (every write refused while Redis is out of memory) is logged once per
 * window with its count, not once per request.
 * @module
 */

export interface RepeatedFaults {
  report(kind: string, message: string): void;
  close(): void;
}

/**
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { repeatedFaults } from "./repeated_faults.ts";
 * const lines: string[] = [];
 * const faults = repeatedFaults((line) => lines.push(line), 10_000);
 * for (let i = 0; i < 480; i++) faults.report("OOM", "redis: OOM command not allowed");
 * faults.close();
 * assert.deepEqual(lines, [
 *   "redis: OOM command not allowed",
 *   "redis: OOM command not allowed (479 more times in 10 s)",
 * ]);
 * ```
 */
export function repeatedFaults(
  log: (line: string) => void,
  windowMs: number,
): RepeatedFaults {
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
    report(kind, message) {
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
    close() {
      for (const kind of [...open.keys()]) flush(kind);
    },
  };
}
