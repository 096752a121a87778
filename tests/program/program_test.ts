/**
 * The set-up both entries share: what the options ask for reaches the
 * handler and the store.
 */
import assert from "node:assert/strict";
import { parseFlags } from "../../src/program/config.ts";
import type { ProgramLog } from "../../src/program/program_log.ts";
import { setUpProgram } from "../../src/program/program.ts";
import { call } from "../_support/call.ts";

const noEnv = () => undefined;

/** A log that keeps its lines. */
function keptLog(): ProgramLog & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    banner: (line) => lines.push(line),
    info: (message) => lines.push(message),
    error: (message) => lines.push(message),
    fault: (message) => lines.push(message),
    report: (message) => lines.push(message),
  };
}

Deno.test("the handler serves the services the options select, over a store with their limits", async () => {
  const config = parseFlags(
    ["--service=quote", "--history=5", "--quiet"],
    noEnv,
  );
  const program = await setUpProgram(config, keptLog(), {});
  try {
    assert.equal((await call(program.handler, "GET", "/quote")).status, 200);
    assert.equal((await call(program.handler, "GET", "/users")).status, 404);
    for (let i = 1; i <= 7; i++) {
      await program.store.addMessage(JSON.stringify({ text: `m${i}` }));
    }
    const kept = await program.store.newestMessages(100);
    assert.equal(kept.length, 5);
  } finally {
    await program.store.close();
  }
});

Deno.test("--rate-limit and --trust-proxy reach the handler", async () => {
  const limited = async (args: string[]) => {
    const program = await setUpProgram(
      parseFlags(["--quiet", "--rate-limit=1/60", ...args], noEnv),
      keptLog(),
      {},
    );
    try {
      const statuses = [];
      for (const forwarded of ["192.0.2.1", "192.0.2.2"]) {
        const res = await call(program.handler, "POST", "/quote", {
          client: "127.0.0.1",
          body: "Hi.",
          headers: { "x-forwarded-for": forwarded },
        });
        statuses.push(res.status);
      }
      return statuses;
    } finally {
      await program.store.close();
    }
  };
  assert.deepEqual(await limited([]), [200, 429], "one client: the proxy");
  assert.deepEqual(
    await limited(["--trust-proxy"]),
    [200, 200],
    "two clients behind a trusted proxy",
  );
});

Deno.test("the stop signal makes the handler send new requests elsewhere", async () => {
  const stopping = new AbortController();
  const program = await setUpProgram(
    parseFlags(["--quiet"], noEnv),
    keptLog(),
    {
      stopSignal: stopping.signal,
    },
  );
  try {
    assert.equal((await call(program.handler, "GET", "/quote")).status, 200);
    stopping.abort();
    const res = await call(program.handler, "GET", "/quote");
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("connection"), "close");
  } finally {
    await program.store.close();
  }
});

Deno.test("the banner names the address listened on, bracketed if IPv6 so it opens, and the services served", async () => {
  const cases = [
    ["messaging", "::1", "http://[::1]:8123/ (services: messaging)"],
    ["all", "127.0.0.1", "http://127.0.0.1:8123/ (services: messaging, quote)"],
    ["quote", "0.0.0.0", "http://0.0.0.0:8123/ (services: quote)"],
  ];
  for (const [service, hostname, banner] of cases) {
    const log = keptLog();
    const program = await setUpProgram(
      parseFlags([`--service=${service}`, "--quiet"], noEnv),
      log,
      {},
    );
    try {
      program.listening({ transport: "tcp", hostname: hostname!, port: 8123 });
      assert.deepEqual(log.lines, [`Listening on ${banner}`]);
      const url = new URL(log.lines[0]!.split(" ")[2]!);
      assert.equal(url.port, "8123");
    } finally {
      await program.store.close();
    }
  }
});
