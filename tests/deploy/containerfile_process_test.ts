/**
 * deploy/Containerfile, as far as a machine with no container engine can
 * check it: what it copies, and its ENTRYPOINT and HEALTHCHECK run as the
 * image would run them, from a read-only install as a user other than root.
 */

import assert from "node:assert/strict";
import config from "../../deno.json" with { type: "json" };
import { type RunningServer, startServer } from "../_support/program.ts";
import {
  install,
  type Installation,
  INSTALLED_FILES,
  stopWhileBusy,
} from "../_support/deployment.ts";

const CONTAINERFILE = new URL("../../deploy/Containerfile", import.meta.url);

/** Its instructions, continuation lines joined, as [keyword, rest]. */
function instructions(): [string, string][] {
  return Deno.readTextFileSync(CONTAINERFILE)
    .replace(/\\\n/g, "")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.startsWith("#"))
    .map((line) => {
      const at = line.indexOf(" ");
      return at < 0 ? [line, ""] : [line.slice(0, at), line.slice(at).trim()];
    });
}

function all(keyword: string): string[] {
  return instructions().filter(([k]) => k === keyword).map(([, rest]) => rest);
}

/** The one `keyword` instruction's text; fails if there is none or more. */
function only(keyword: string): string {
  const [value, ...others] = all(keyword);
  assert.ok(value !== undefined && others.length === 0, `one ${keyword}`);
  return value;
}

/** The ENTRYPOINT, in its JSON form. */
function entrypoint(): string[] {
  return JSON.parse(only("ENTRYPOINT"));
}

/** The ENV the image sets. */
function imageEnv(): Record<string, string> {
  return Object.fromEntries(
    all("ENV").flatMap((rest) => rest.split(/\s+/)).map((pair) => {
      const at = pair.indexOf("=");
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

/** The HEALTHCHECK's command, asking on `port` instead of 8000. */
function healthCheck(port: number): string[] {
  const value = only("HEALTHCHECK");
  const command: string[] = JSON.parse(value.slice(value.indexOf("CMD ") + 4));
  return command.map((word) => word.replaceAll("/8000", `/${port}`));
}

/** Starts the ENTRYPOINT with `args` after it, as `docker run IMAGE ARGS` would. */
async function runImage(
  installation: Installation,
  args: string[],
): Promise<RunningServer> {
  return await startServer([], {
    ...imageEnv(),
    DENO_DIR: installation.denoDir,
  }, {
    command: [...entrypoint(), ...args],
    cwd: installation.dir,
    clearEnv: true,
    prefix: installation.prefix,
  });
}

Deno.test("deploy/Containerfile copies exactly what an installation holds, and runs as a user other than root", () => {
  const copied = all("COPY").filter((rest) => !rest.startsWith("--from"))
    .flatMap((rest) => rest.split(/\s+/).slice(0, -1))
    .map((source) => source.replace(/\/$/, ""));
  assert.deepEqual(copied.sort(), [...INSTALLED_FILES].sort());
  const [user] = all("USER");
  assert.ok(user !== "root" && user !== "0", `USER ${user}`);
});

Deno.test("deploy/Containerfile's ENTRYPOINT runs the program with the start task's permissions from a read-only install, and its HEALTHCHECK tells up from down", async () => {
  const permissions = (words: string[]) =>
    words.filter((w) => w.startsWith("--allow-"));
  assert.deepEqual(
    permissions(entrypoint()),
    permissions(config.tasks.start.split(" ")),
  );
  const installation = await install();
  const server = await runImage(installation, [
    "--hostname=127.0.0.1",
    "--port=0",
  ]);
  const check = async () => {
    const [program = "", ...args] = healthCheck(
      Number(new URL(server.url).port),
    );
    return (await new Deno.Command(program, {
      args,
      stderr: "null",
      signal: AbortSignal.timeout(5000),
    }).output()).code;
  };
  try {
    assert.equal(await check(), 0);
    assert.equal(await server.stop(), 0);
    assert.notEqual(await check(), 0);
  } finally {
    await server.stop();
    await installation.remove();
  }
});

Deno.test("deploy/Containerfile drains within docker's and podman's stop timeout (10 s): SIGTERM with a request stuck in flight exits 0 before it", async () => {
  const installation = await install();
  const server = await runImage(installation, [
    "--hostname=127.0.0.1",
    "--port=0",
  ]);
  try {
    const { code, seconds } = await stopWhileBusy(server);
    assert.equal(code, 0);
    assert.ok(seconds < 10, `stopping took ${seconds} s`);
  } finally {
    await server.stop();
    await installation.remove();
  }
});
