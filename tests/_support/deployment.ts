/**
 * The program as deploy/ installs it: only the files docs/deploy.md copies
 * (and the Containerfile COPYs), in a read-only folder of their own, with a
 * read-only, empty Deno cache (on the memory store the program needs no
 * package), run as an unprivileged user when the tests run as root.
 * @module
 */

import type { RunningServer } from "./program.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** What an installation holds, relative to the repository's root. */
export const INSTALLED_FILES = ["deno.json", "deno.lock", "main.ts", "src"];

/** A read-only installation. */
export interface Installation {
  /** The folder holding `INSTALLED_FILES`. */
  dir: string;
  /** An empty folder for `DENO_DIR`: the program may neither download nor write. */
  denoDir: string;
  /** What to run the program under: `setpriv` to nobody when the tests run as root (who may write anywhere), else nothing. */
  prefix: string[];
  /** Removes it all. */
  remove(): Promise<void>;
}

async function run(command: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command(command, { args }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
}

/** Whether anyone may reach `path` (every folder on the way open to others). */
function reachableByAll(path: string): boolean {
  const parts = path.split("/");
  for (let i = 1; i <= parts.length; i++) {
    const mode = Deno.statSync(parts.slice(0, i).join("/") || "/").mode ?? 0;
    if ((mode & 0o001) === 0) return false;
  }
  return true;
}

/** Lays out a fresh read-only installation. */
export async function install(): Promise<Installation> {
  const root = await Deno.makeTempDir({ prefix: "lms-installed-" });
  const dir = `${root}/app`;
  const denoDir = `${root}/deno_dir`;
  await Deno.mkdir(dir);
  await Deno.mkdir(denoDir);
  await run("cp", "-R", ...INSTALLED_FILES.map((f) => `${ROOT}${f}`), dir);
  await run("chmod", "-R", "a-w,a+rX", root);
  const unprivileged = Deno.uid() === 0 && reachableByAll(Deno.execPath());
  return {
    dir,
    denoDir,
    prefix: unprivileged
      ? [
        "setpriv",
        "--reuid=nobody",
        "--regid=nogroup",
        "--clear-groups",
        "--inh-caps=-all",
      ]
      : [],
    async remove() {
      await run("chmod", "-R", "u+w", root);
      await Deno.remove(root, { recursive: true });
    },
  };
}

/**
 * Sends SIGTERM while a request is in flight that never finishes (its body
 * stops halfway), so the program drains for as long as it may; returns the
 * exit code and the seconds the exit took.
 */
export async function stopWhileBusy(
  server: RunningServer,
): Promise<{ code: number; seconds: number }> {
  const { hostname, port } = new URL(server.url);
  const busy = await Deno.connect({ hostname, port: Number(port) });
  try {
    await busy.write(
      new TextEncoder().encode(
        "POST /quote HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nHalf",
      ),
    );
    // Let the request reach the program before it is told to stop.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const start = performance.now();
    server.process.kill("SIGTERM");
    const { code } = await server.process.status;
    return { code, seconds: (performance.now() - start) / 1000 };
  } finally {
    busy.close();
  }
}
