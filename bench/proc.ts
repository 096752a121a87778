/**
 * What the benchmarks read of a server process under /proc. Through `cat`:
 * Deno grants reads under /proc only with --allow-all.
 * @module
 */

/** The text of a file under /proc. */
export function readProc(path: string): string {
  const out = new Deno.Command("cat", { args: [path] }).outputSync();
  return new TextDecoder().decode(out.stdout);
}

/** A memory field of `/proc/PID/status` in MB: `VmRSS` now, `VmHWM` at its peak; 0 once the process is gone. */
export function statusMb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const status = readProc(`/proc/${pid}/status`);
  const kb = status.match(new RegExp(`${field}:\\s+(\\d+)`))?.[1];
  return Number(kb ?? 0) / 1024;
}
