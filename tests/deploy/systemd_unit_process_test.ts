/**
 * deploy/lms.service: systemd's own checks where systemd-analyze exists,
 * and its command line run as the unit runs it, from a read-only install.
 */

import assert from "node:assert/strict";
import config from "../../deno.json" with { type: "json" };
import { type RunningServer, startServer } from "../_support/program.ts";
import {
  install,
  type Installation,
  stopWhileBusy,
} from "../_support/deployment.ts";

const UNIT = new URL("../../deploy/lms.service", import.meta.url).pathname;

/** Every `Key=value` of the unit, in order, as [key, value]. */
function settings(): [string, string][] {
  return Deno.readTextFileSync(UNIT).split("\n")
    .filter((line) => /^[A-Za-z]+=/.test(line))
    .map((line) => {
      const at = line.indexOf("=");
      return [line.slice(0, at), line.slice(at + 1)];
    });
}

function setting(key: string): string {
  const [only, ...others] = settings().filter(([k]) => k === key);
  assert.ok(only !== undefined && others.length === 0, `one ${key}=`);
  return only[1];
}

/**
 * ExecStart as systemd splits it: words at spaces, and a word that is
 * exactly `$NAME` replaced by the words of that variable (none if unset).
 */
function execStart(env: Record<string, string>): string[] {
  return setting("ExecStart").split(/\s+/).flatMap((word) => {
    const variable = word.match(/^\$([A-Z_]+)$/)?.[1];
    if (variable === undefined) {
      assert.ok(!word.includes("$"), `only $NAME words: ${word}`);
      return [word];
    }
    return (env[variable] ?? "").split(/\s+/).filter((w) => w !== "");
  });
}

function seconds(value: string): number {
  const match = value.match(/^(\d+)s$/);
  assert.ok(match, `a time in seconds: ${value}`);
  return Number(match[1]);
}

/**
 * Runs ExecStart from `installation` as the unit would: with its
 * Environment= settings (the cache the installation's), and `flags` as the
 * environment file's LMS_FLAGS.
 */
async function startUnit(
  installation: Installation,
  flags: string,
): Promise<RunningServer> {
  const env: Record<string, string> = {};
  for (const [key, value] of settings()) {
    if (key !== "Environment") continue;
    const at = value.indexOf("=");
    env[value.slice(0, at)] = value.slice(at + 1);
  }
  env.DENO_DIR = installation.denoDir;
  env.LMS_FLAGS = flags;
  return await startServer([], env, {
    command: execStart(env),
    cwd: installation.dir,
    clearEnv: true,
    prefix: installation.prefix,
  });
}

const analyzer = new Deno.Command("sh", {
    args: ["-c", "command -v systemd-analyze"],
    stdout: "null",
    stderr: "null",
  }).outputSync().success
  ? undefined
  : "systemd-analyze is not installed (apt-get install systemd)";
if (analyzer) console.warn(`\n!!! SKIPPING systemd-analyze: ${analyzer} !!!\n`);

async function analyze(...args: string[]) {
  const out = await new Deno.Command("systemd-analyze", { args }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return {
    code: out.code,
    stdout: decode(out.stdout),
    stderr: decode(out.stderr),
  };
}

Deno.test({
  name: "deploy/lms.service passes systemd-analyze verify, without a warning",
  ignore: analyzer !== undefined,
  async fn() {
    const { code, stderr } = await analyze("verify", UNIT);
    // verify exits 0 on unknown keys and bad values, only warning.
    assert.deepEqual({ code, stderr }, { code: 0, stderr: "" });
  },
});

Deno.test({
  name:
    "deploy/lms.service is rated OK (exposure under 2.0 of 10) by systemd-analyze security",
  ignore: analyzer !== undefined,
  async fn() {
    const { code, stdout } = await analyze(
      "security",
      "--offline=true",
      "--threshold=9",
      UNIT,
    );
    assert.equal(
      code,
      0,
      stdout.split("\n").filter((l) => l.startsWith("✗")).join("\n"),
    );
  },
});

Deno.test("deploy/lms.service runs the program with the start task's permissions, on loopback, trusting the proxy's X-Forwarded-For, from a read-only install", async () => {
  const permissions = (words: string[]) =>
    words.filter((w) => w.startsWith("--allow-"));
  assert.deepEqual(
    permissions(execStart({})),
    permissions(config.tasks.start.split(" ")),
  );
  const installation = await install();
  // The environment file may add flags; a repeated flag's last value wins.
  const server = await startUnit(
    installation,
    "--port=0 --rate-limit=1/3600",
  );
  try {
    assert.match(server.banner, /^Listening on http:\/\/127\.0\.0\.1:\d+\//);
    const write = async (forwardedFor: string) => {
      const res = await fetch(`${server.url}quote`, {
        method: "POST",
        headers: { "x-forwarded-for": forwardedFor },
        body: "Counted by the proxy's word.",
      });
      await res.body?.cancel();
      return res.status;
    };
    // Each address the proxy names is a client of its own.
    assert.deepEqual(
      [
        await write("203.0.113.1"),
        await write("203.0.113.1"),
        await write("203.0.113.2"),
      ],
      [200, 429, 200],
    );
  } finally {
    await server.stop();
    await installation.remove();
  }
});

Deno.test("deploy/lms.service gives a stop more time than the program's drain takes: SIGTERM with a request stuck in flight still exits 0 before TimeoutStopSec", async () => {
  const installation = await install();
  const server = await startUnit(installation, "--port=0");
  try {
    const { code, seconds: took } = await stopWhileBusy(server);
    assert.equal(code, 0);
    assert.ok(
      took < seconds(setting("TimeoutStopSec")),
      `stopping took ${took} s`,
    );
  } finally {
    await server.stop();
    await installation.remove();
  }
});
