/**
 * `deno task bench:cold-start`: what starting the program costs. Idle RSS
 * of the process `deno task start` runs, on the memory store (the median of
 * several starts), and what a first `deno task start` downloads with an
 * empty `DENO_DIR`: the bytes that come through a counting HTTPS proxy, the
 * npm packages that land in the cache, and the seconds until the banner.
 * `--dir` measures another checkout, so that two commits compare alike.
 * @module
 */

import { flagsOf, usageError } from "./cli.ts";
import { countingProxy } from "./counting_proxy.ts";
import { median } from "./median.ts";
import { statusMb } from "./proc.ts";

const flags = flagsOf(
  {
    dir: { type: "string", default: new URL("../", import.meta.url).pathname },
    starts: { type: "string", default: "5" },
    cold: { type: "string", default: "1" },
    via: { type: "string", default: "task" },
  },
  `Usage: deno task bench:cold-start [flags]
  --dir=D      the checkout to measure (default: this one)
  --starts=N   warm starts whose idle RSS is measured (default 5)
  --cold=N     starts with an empty DENO_DIR, through the proxy (default 1)
  --via=V      task: the cold start is \`deno task start\`; run: the command
               the task runs, \`deno run ... main.ts\` (default task)`,
);
if (flags.via !== "task" && flags.via !== "run") {
  usageError(`--via must be task or run (got "${flags.via}")`);
}
for (const name of ["starts", "cold"] as const) {
  if (!/^[1-9]\d?$/.test(flags[name])) {
    usageError(
      `--${name} must be a whole number from 1 to 99 (got "${flags[name]}")`,
    );
  }
}
const DIR = flags.dir.endsWith("/") ? flags.dir : `${flags.dir}/`;
/** How long one start may take, cold downloads included. */
const START_TIMEOUT_MS = 180_000;

/** The words of a task's command in `dir`'s deno.json, after `deno`. */
async function taskArgs(dir: string, task: string): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(`${dir}deno.json`));
  const [deno, ...args] = String(config.tasks[task]).split(" ");
  if (deno !== "deno") throw new Error(`task ${task} does not run deno`);
  return args;
}

interface Started {
  process: Deno.ChildProcess;
  seconds: number;
}

/**
 * Spawns `args` in `dir` as its own process group, and waits for the
 * program's banner; throws with what it printed if there is none.
 */
async function startUntilBanner(
  args: string[],
  env: Record<string, string>,
): Promise<Started> {
  const began = performance.now();
  // Its own group, so that `deno task` and the `deno run` it spawns stop together.
  const process = new Deno.Command("setsid", {
    args: [Deno.execPath(), ...args],
    cwd: DIR,
    env,
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const timer = setTimeout(() => stop(process), START_TIMEOUT_MS);
  const reader = process.stdout.pipeThrough(new TextDecoderStream())
    .getReader();
  let out = "";
  while (!out.includes("Listening on ")) {
    const { done, value } = await reader.read();
    if (done) break;
    out += value;
  }
  clearTimeout(timer);
  if (!out.includes("Listening on ")) {
    throw new Error(`no banner from ${args.join(" ")}: ${out}`);
  }
  // Keep the pipe drained so the program never blocks writing to it.
  (async () => {
    while (!(await reader.read()).done);
  })().catch(() => {});
  return { process, seconds: (performance.now() - began) / 1000 };
}

async function stop(process: Deno.ChildProcess): Promise<void> {
  try {
    Deno.kill(-process.pid, "SIGTERM");
  } catch {
    // Already gone.
  }
  const timer = setTimeout(() => {
    try {
      Deno.kill(-process.pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }, 10_000);
  await process.status;
  clearTimeout(timer);
}

/** The `name@version` folders of the npm cache under `denoDir`. */
async function cachedPackages(denoDir: string): Promise<string[]> {
  const root = `${denoDir}/npm/registry.npmjs.org`;
  const found: string[] = [];
  const versionsOf = async (name: string) => {
    for await (const version of Deno.readDir(`${root}/${name}`)) {
      if (version.isDirectory) found.push(`${name}@${version.name}`);
    }
  };
  try {
    for await (const entry of Deno.readDir(root)) {
      if (!entry.isDirectory) continue;
      if (!entry.name.startsWith("@")) {
        await versionsOf(entry.name);
        continue;
      }
      for await (const scoped of Deno.readDir(`${root}/${entry.name}`)) {
        if (scoped.isDirectory) {
          await versionsOf(`${entry.name}/${scoped.name}`);
        }
      }
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return found.sort();
}

const PROGRAM_FLAGS = ["--port=0", "--hostname=127.0.0.1"];
const mb = (bytes: number) => (bytes / 1_000_000).toFixed(1);

const start = await taskArgs(DIR, "start");
const rss: number[] = [];
for (let i = 0; i < Number(flags.starts); i++) {
  const { process } = await startUntilBanner([...start, ...PROGRAM_FLAGS], {});
  // As bench/memory.ts does: 200 ms for the start-up's last work to settle.
  await new Promise((resolve) => setTimeout(resolve, 200));
  rss.push(statusMb(process.pid, "VmRSS"));
  await stop(process);
}
const rev = new TextDecoder().decode(
  new Deno.Command("git", { args: ["-C", DIR, "rev-parse", "--short", "HEAD"] })
    .outputSync().stdout,
).trim();
console.log(
  `# ${DIR} (${rev || "not a git checkout"}), Deno ${Deno.version.deno}\n`,
);
console.log(
  `Idle RSS of \`deno ${
    start.join(" ")
  }\` on the memory store, ${rss.length} starts: median ${
    median(rss).toFixed(1)
  } MB (${Math.min(...rss).toFixed(1)}–${Math.max(...rss).toFixed(1)})\n`,
);

const cold = flags.via === "task" ? ["task", "start"] : start;
console.log(
  `| cold \`deno ${
    cold.join(" ")
  }\` | received MB | npm packages | cache MB | s to banner |`,
);
console.log("|---|--:|--:|--:|--:|");
let packages: string[] = [];
let hosts = new Map<string, number>();
for (let i = 0; i < Number(flags.cold); i++) {
  const denoDir = await Deno.makeTempDir({ prefix: "lms-cold-" });
  const proxy = countingProxy();
  try {
    const { process, seconds } = await startUntilBanner(
      [...cold, ...PROGRAM_FLAGS],
      { DENO_DIR: denoDir, HTTPS_PROXY: proxy.url, NO_COLOR: "1" },
    );
    await stop(process);
    const { total, byHost } = proxy.received();
    packages = await cachedPackages(denoDir);
    hosts = byHost;
    const du = new TextDecoder().decode(
      new Deno.Command("du", { args: ["-sb", denoDir] }).outputSync().stdout,
    );
    console.log(
      `| run ${i + 1} | ${mb(total)} | ${packages.length} | ${
        mb(Number(du.split("\t")[0]))
      } | ${seconds.toFixed(1)} |`,
    );
  } finally {
    proxy.close();
    await Deno.remove(denoDir, { recursive: true });
  }
}
console.log(
  `\nReceived from: ${
    [...hosts].map(([host, bytes]) => `${host} ${mb(bytes)} MB`).join(", ")
  }\n\nPackages: ${packages.join(", ")}`,
);
