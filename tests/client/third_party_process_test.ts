/**
 * The API driven by clients this project did not write: Python's requests
 * and Node's fetch, as subprocesses against the real program. Each of the
 * names, Latin-1 and beyond, registers, lists, posts and unregisters, with
 * the credential sent both ways a client author can send it (see the
 * scripts in third_party/).
 */

import assert from "node:assert/strict";
import { startServer } from "../_support/program.ts";

const DIR = new URL("./third_party/", import.meta.url).pathname;

/** Names from several scripts: Latin-1, beyond it, Cyrillic, CJK, emoji. */
const NAMES = ["José", "Zoë", "Иван", "李雷", "Bob🚀", "Łukasz"];

const fitsLatin1 = (name: string) =>
  [...name].every((c) => c.codePointAt(0)! <= 0xff);

/**
 * Every name as UTF-8 bytes, and the Latin-1 ones also as-is (the
 * clients' default), which the service reads as ISO-8859-1.
 */
const PLAN = NAMES.flatMap((name) => [
  ...(fitsLatin1(name) ? [[name, "as-is"]] : []),
  [name, "utf8"],
]);

/** Whether `command` runs and exits 0 here. */
function runs(command: string, args: string[]): boolean {
  try {
    return new Deno.Command(command, { args, stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

const pythonMissing = runs("python3", ["-c", "import requests"])
  ? undefined
  : "python3 with requests is not installed (apt-get install python3-requests)";
const nodeMissing = runs("node", [
    "-e",
    "process.exit(typeof fetch === 'function' ? 0 : 1)",
  ])
  ? undefined
  : "node with a global fetch (18 or later) is not installed";
for (const missing of [pythonMissing, nodeMissing]) {
  if (missing) {
    console.warn(`\n!!! SKIPPING a third-party client test: ${missing} !!!\n`);
  }
}

/** Runs a client script against a fresh program; one observation per plan entry. */
async function drive(command: string, script: string) {
  const server = await startServer(["--quiet"]);
  try {
    const { code, stdout, stderr } = await new Deno.Command(command, {
      args: [`${DIR}${script}`, server.url, JSON.stringify(PLAN)],
      signal: AbortSignal.timeout(60_000),
    }).output();
    const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
    assert.equal(code, 0, decode(stderr));
    return decode(stdout).trim().split("\n").map((line) => JSON.parse(line));
  } finally {
    assert.equal(await server.stop(), 0);
  }
}

/** What a client must have seen for each name, whichever way it sent it. */
// deno-lint-ignore no-explicit-any
function assertServed(seen: any[]): void {
  assert.deepEqual(seen.map((s) => [s.name, s.way]), PLAN);
  for (const s of seen) {
    const what = `${s.name} sent ${s.way}`;
    assert.equal(s.register[0], 200, what);
    assert.match(s.register[1].token, new RegExp(`^${s.name}-[0-9a-f]{40}$`));
    assert.deepEqual(s.users, [200, { users: [s.name] }], what);
    assert.deepEqual(s.post, [200, { status: "added" }], what);
    assert.equal(s.messages[0], 200, what);
    assert.deepEqual(s.messages[1][0], {
      text: `hello from ${s.name}`,
      color: "black",
      user: s.name,
    }, what);
    assert.deepEqual(s.unregister, [200, { Goodbye: s.name }], what);
    assert.equal(s.after[0], 401, `${what}: the old credential is dead`);
  }
}

const CLIENTS = [
  {
    name: "Python requests",
    command: "python3",
    script: "requests_client.py",
    missing: pythonMissing,
  },
  {
    name: "Node fetch",
    command: "node",
    script: "fetch_client.mjs",
    missing: nodeMissing,
  },
];

for (const client of CLIENTS) {
  Deno.test({
    name:
      `${client.name}: six names register, list, post and unregister, Latin-1 ones as-is and every one as UTF-8 bytes`,
    ignore: client.missing !== undefined,
    async fn() {
      assertServed(await drive(client.command, client.script));
    },
  });
}
