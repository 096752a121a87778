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

/** Clock ticks per second of `/proc/PID/stat`'s times (Linux's USER_HZ). */
export const CLK_TCK = 100;

/** CPU time process `pid` has used so far, user and system, in clock ticks. */
export function cpuTicks(pid: number): number {
  const stat = readProc(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** A memory field of `/proc/PID/status` in MB: `VmRSS` now, `VmHWM` at its peak; 0 once the process is gone. */
export function statusMb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const status = readProc(`/proc/${pid}/status`);
  const kb = status.match(new RegExp(`${field}:\\s+(\\d+)`))?.[1];
  return Number(kb ?? 0) / 1024;
}

/** How many files (sockets included) process `pid` has open; 0 once it is gone. */
export function openFiles(pid: number): number {
  const out = new Deno.Command("ls", { args: [`/proc/${pid}/fd`] })
    .outputSync();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((name) => name !== "").length;
}

/** The process ids of `pid`'s children (nginx's workers, for its master). */
export function childrenOf(pid: number): number[] {
  // Each thread lists the children it started.
  const out = new Deno.Command("sh", {
    args: ["-c", `cat /proc/${pid}/task/*/children`],
    stderr: "null",
  }).outputSync();
  return new TextDecoder().decode(out.stdout).split(/\s+/)
    .filter((id) => id !== "").map(Number);
}

/**
 * A counter of `/proc/net/netstat` (`text`, read now by default), such as
 * `ListenOverflows`, for the whole network namespace; NaN if it has none.
 */
export function netstatCounter(
  name: string,
  text = readProc("/proc/net/netstat"),
): number {
  // Pairs of lines: "Section: names..." then "Section: values...".
  const lines = text.split("\n");
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const at = lines[i]?.split(" ").indexOf(name) ?? -1;
    if (at > 0) return Number(lines[i + 1]?.split(" ")[at]);
  }
  return NaN;
}
