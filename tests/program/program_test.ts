/**
 * The set-up both entries share: what the options ask for reaches the
 * handler and the store.
 */
import assert from "node:assert/strict";
import { parseFlags } from "../../src/program/config.ts";
import type { ProgramLog } from "../../src/program/program_log.ts";
import { listeningBanner, setUpProgram } from "../../src/program/program.ts";
import { call } from "../_support/call.ts";

const noEnv = () => undefined;

/** A log that keeps its lines. */
function keptLog(): ProgramLog & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
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

Deno.test("the banner names the address listened on and the services served", async () => {
  const log = keptLog();
  const program = await setUpProgram(
    parseFlags(["--service=messaging", "--quiet"], noEnv),
    log,
    {},
  );
  try {
    program.listening({ transport: "tcp", hostname: "::1", port: 8123 });
    assert.deepEqual(log.lines, [
      "Listening on http://[::1]:8123/ (services: messaging)",
    ]);
  } finally {
    await program.store.close();
  }
});

const at = (hostname: string, port: number): Deno.NetAddr => ({
  transport: "tcp",
  hostname,
  port,
});

Deno.test("the banner names the bound address and the services served", () => {
  assert.equal(
    listeningBanner(at("127.0.0.1", 41234), "all"),
    "Listening on http://127.0.0.1:41234/ (services: messaging, quote)",
  );
  assert.equal(
    listeningBanner(at("0.0.0.0", 8000), "quote"),
    "Listening on http://0.0.0.0:8000/ (services: quote)",
  );
});

Deno.test("an IPv6 address is bracketed, so the URL in the banner can be opened", () => {
  const banner = listeningBanner(at("::1", 8000), "messaging");
  assert.equal(
    banner,
    "Listening on http://[::1]:8000/ (services: messaging)",
  );
  const url = new URL(banner.split(" ")[2] ?? "");
  assert.equal(url.hostname, "[::1]");
  assert.equal(url.port, "8000");
});
