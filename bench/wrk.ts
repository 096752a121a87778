/**
 * Runs `wrk` with a Lua script and reads its summary, for the HTTP benches.
 * @module
 */

/** What one `wrk` run measured. */
export interface WrkRun {
  requests: number;
  rps: number;
  p99ms: number;
  /** Answers other than 2xx or 3xx, and socket errors. */
  bad: number;
}

/** How to run `wrk`. */
export interface WrkOptions {
  /** Absolute URL of the server; the script sets the path. */
  url: string;
  /** The Lua script. */
  script: string;
  seconds: number;
  connections: number;
  /** Default 1. */
  threads?: number;
  /** Runs wrk through this command, such as `taskset -c 0`. */
  prefix?: string[];
}

const RESULTS = new URL("./results/", import.meta.url).pathname;

function parseLatencyMs(text: string): number {
  const m = text.match(/^([\d.]+)(us|ms|s)$/);
  if (!m) return NaN;
  const scale = { us: 0.001, ms: 1, s: 1000 }[m[2] as "us" | "ms" | "s"];
  return Number(m[1]) * scale;
}

/** Runs `wrk` once and returns its figures; throws when it fails. */
export async function runWrk(options: WrkOptions): Promise<WrkRun> {
  // Beside the results: the benches may write nowhere else.
  const file = await Deno.makeTempFile({ dir: RESULTS, suffix: ".tmp" });
  await Deno.writeTextFile(file, options.script);
  const [program = "wrk", ...args] = [
    ...(options.prefix ?? []),
    "wrk",
    `-t${options.threads ?? 1}`,
    `-c${options.connections}`,
    `-d${options.seconds}s`,
    "--latency",
    "-s",
    file,
    options.url,
  ];
  const out = await new Deno.Command(program, {
    args,
    stdout: "piped",
    stderr: "piped",
  }).output().finally(() => Deno.remove(file));
  const text = new TextDecoder().decode(out.stdout);
  const requests = Number(text.match(/(\d+) requests in/)?.[1] ?? NaN);
  const rps = Number(text.match(/Requests\/sec:\s+([\d.]+)/)?.[1] ?? NaN);
  const p99 = parseLatencyMs(text.match(/^\s+99%\s+(\S+)/m)?.[1] ?? "");
  const non2xx = Number(
    text.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0,
  );
  const socket = text.match(
    /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/,
  );
  const socketErrors = socket
    ? socket.slice(1).reduce((a, b) => a + Number(b), 0)
    : 0;
  if (!out.success || Number.isNaN(requests)) {
    throw new Error(
      `wrk failed: ${text}${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return { requests, rps, p99ms: p99, bad: non2xx + socketErrors };
}
