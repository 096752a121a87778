/** Starts the real program as a subprocess on port 0, as a user would run it. */

import config from "../../deno.json" with { type: "json" };

const ROOT = new URL("../../", import.meta.url).pathname;
const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const SERVE = new URL("../../serve.ts", import.meta.url).pathname;

/** A loopback port nothing listens on right now. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Waits (up to 5 s) until something accepts connections on loopback `port`; `what` names it in the error. */
export async function waitForPort(port: number, what: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`${what} did not listen on ${port}`);
}

/** A running program under test. */
export interface RunningServer {
  /** Base URL, ending in `/`. */
  url: string;
  /** The first line it printed. */
  banner: string;
  process: Deno.ChildProcess;
  /** Everything written to standard error so far. */
  stderr(): string;
  /** Sends `signal` and waits for the exit code. */
  stop(signal?: Deno.Signal): Promise<number>;
}

/** Options of {@linkcode startServer}. */
export interface StartOptions {
  /** Add `--port=0` unless `args` name a port. Default true. */
  port?: boolean;
  /** The module to run. Default `main.ts`. */
  entry?: string;
  /**
   * Another checkout of the project to run instead of this one: its
   * `main.ts`, from its directory, with the permissions its own `deno.json`
   * grants (so a branch can be measured by this checkout's tools).
   */
  root?: string;
  /** A command the run is wrapped in, such as `taskset -c 1`. */
  prefix?: string[];
  /** Extra `deno run` flags, such as `--v8-flags=...`. */
  denoFlags?: string[];
  /**
   * Run `serve.ts` under `deno serve` with this many workers instead of
   * `main.ts`; it takes no flags, so `args` are ignored and `env` configures it.
   */
  workers?: number;
  /** Send standard error to /dev/null (a benchmark's request log), rather than keeping it for `stderr()`. */
  /** How long the banner may take (a saturated host starts slowly); 15 s by default. */
  startMs?: number;
  discardStderr?: boolean;
  /** With `workers`: give deno serve `--host` and `--port`. Default true; false leaves the address to `DENO_SERVE_ADDRESS`. */
  address?: boolean;
  /**
   * Run this command line instead, as a deployment file writes it (its
   * first word `deno` standing for this Deno); `args` are ignored.
   */
  command?: string[];
  /** Where to run it. Default: the repository's root. */
  cwd?: string;
  /** Give the process `env` only, not this process's environment too. */
  clearEnv?: boolean;
}

/**
 * The permission flags a task grants, so the tests run the program with
 * exactly what users run it with (from the repository's root, as
 * `deno task` does, since some name relative paths).
 */
export function permissionsOf(
  task: "start" | "serve:parallel",
  root?: string,
): string[] {
  const tasks: typeof config.tasks = root === undefined
    ? config.tasks
    : JSON.parse(Deno.readTextFileSync(`${root}/deno.json`)).tasks;
  return tasks[task].split(" ").filter((word) => word.startsWith("--allow-"));
}

function runCommand(args: string[], options: StartOptions): string[] {
  if (options.command !== undefined) {
    const [program, ...rest] = options.command;
    if (program !== "deno") throw new Error(`runs ${program}, not deno`);
    return [...(options.prefix ?? []), Deno.execPath(), ...rest];
  }
  const deno = [
    ...(options.prefix ?? []),
    Deno.execPath(),
  ];
  if (options.workers !== undefined) {
    return [
      ...deno,
      "serve",
      ...(options.workers > 1 ? ["--parallel"] : []),
      ...permissionsOf("serve:parallel"),
      ...(options.denoFlags ?? []),
      ...(options.address ?? true
        ? ["--host=127.0.0.1", `--port=${freePort()}`]
        : []),
      SERVE,
    ];
  }
  const addPort = (options.port ?? true) &&
    !args.some((a) => a.startsWith("--port"));
  return [
    ...deno,
    "run",
    ...permissionsOf("start", options.root),
    ...(options.denoFlags ?? []),
    options.entry ?? (options.root ? `${options.root}/main.ts` : MAIN),
    "--hostname=127.0.0.1",
    ...(addPort ? ["--port=0"] : []),
    ...args,
  ];
}

/** Runs `main.ts` with `args` and waits for its banner. */
export async function startServer(
  args: string[] = [],
  env: Record<string, string> = {},
  options: StartOptions = {},
): Promise<RunningServer> {
  const [program = Deno.execPath(), ...programArgs] = runCommand(
    args,
    options,
  );
  const process = new Deno.Command(program, {
    args: programArgs,
    cwd: options.cwd ?? options.root ?? ROOT,
    clearEnv: options.clearEnv,
    env: options.workers === undefined
      ? env
      : { DENO_JOBS: String(options.workers), ...env },
    stdout: "piped",
    stderr: options.discardStderr ? "null" : "piped",
  }).spawn();
  let errText = "";
  const errDone = options.discardStderr
    ? Promise.resolve()
    : process.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
      new WritableStream({ write: (chunk) => void (errText += chunk) }),
    );
  const lines = process.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const deadline = setTimeout(
    () => process.kill("SIGKILL"),
    options.startMs ?? 15_000,
  );
  while (!out.includes("\n")) {
    const { done, value } = await lines.read();
    if (done) break;
    out += value;
  }
  clearTimeout(deadline);
  // deno serve --parallel tags each line with its worker.
  const [firstLine = ""] = out.split("\n");
  const banner = firstLine.replace(/^\[serve-worker-\d+ *\] /, "");
  // Found anywhere in the line: with --log-format=json it is a JSON message.
  const [, url] = banner.match(/Listening on (http:\/\/[^ ]+\/) /) ?? [];
  if (url === undefined) {
    await process.status;
    await errDone;
    throw new Error(
      `no banner; stdout=${JSON.stringify(out)} stderr=${errText}`,
    );
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  const outDone = (async () => {
    while (!(await lines.read()).done);
  })();
  return {
    url,
    banner,
    process,
    stderr: () => errText,
    async stop(signal: Deno.Signal = "SIGTERM") {
      try {
        process.kill(signal);
      } catch {
        // Already exited; its status still tells how.
      }
      const timer = setTimeout(() => process.kill("SIGKILL"), 10_000);
      const { code } = await process.status;
      clearTimeout(timer);
      await Promise.all([errDone, outDone]);
      return code;
    },
  };
}

/** Runs `main.ts` to completion with `args` and returns its exit code and output. */
export async function runProgram(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissionsOf("start"), MAIN, ...args],
    cwd: ROOT,
    env,
    signal: AbortSignal.timeout(15_000),
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code, stdout: decode(stdout), stderr: decode(stderr) };
}
