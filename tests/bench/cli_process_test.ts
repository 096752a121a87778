/** Every benchmark script refuses a bad flag in one line (exit 2) and explains its flags on --help, before doing any work. */

import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

async function runScript(script: string, args: string[]) {
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", `bench/${script}`, ...args],
    cwd: ROOT,
    signal: AbortSignal.timeout(30_000),
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code, stdout: decode(stdout), stderr: decode(stderr) };
}

for (
  const script of [
    "run.ts",
    "memory.ts",
    "staleness.ts",
    "streams.ts",
    "stalled_streams.ts",
    "soak.ts",
    "cold_start.ts",
    "write_scale.ts",
    "scale.ts",
  ]
) {
  Deno.test(`bench/${script}: --bogus is one line and exit 2; --help is the usage and exit 0`, async () => {
    const bad = await runScript(script, ["--bogus"]);
    assert.equal(bad.code, 2, bad.stderr);
    assert.equal(bad.stderr.trim().split("\n").length, 1, bad.stderr);
    assert.match(bad.stderr, /^error: .*bogus.* \(see --help\)\n$/);
    const help = await runScript(script, ["--help"]);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: deno task bench|^Usage: deno task soak/);
  });
}

Deno.test("bench/run.ts: a scenario that does not exist is named", async () => {
  const bad = await runScript("run.ts", ["--scenarios=get_messages,nope"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /no scenario named nope/);
});

Deno.test("bench/run.ts: durations, rounds and connections are whole numbers, refused before wrk would fail on them", async () => {
  for (
    const flag of [
      "--warmup=0.5",
      "--duration=1.5",
      "--duration=0",
      "--rounds=0",
      "--connections=-3",
      "--warmup=x",
    ]
  ) {
    const bad = await runScript("run.ts", [flag]);
    assert.equal(bad.code, 2, flag);
    assert.match(
      bad.stderr,
      new RegExp(
        `^error: --${flag.slice(2, flag.indexOf("="))} must be a whole number`,
      ),
      flag,
    );
  }
});

Deno.test("bench/write_scale.ts: a count of processes that is not a whole number from 1 to 64 is named", async () => {
  for (const counts of ["0", "1,x", "65"]) {
    const bad = await runScript("write_scale.ts", [`--processes=${counts}`]);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /--processes must be whole numbers from 1 to 64/);
  }
});

Deno.test("bench/write_scale.ts: fewer connections than wrk's two threads is named, not a crash", async () => {
  const bad = await runScript("write_scale.ts", ["--connections=1"]);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /--connections must be whole numbers from 2 to/);
  assert.doesNotMatch(bad.stderr, /\n\s+at /);
});
