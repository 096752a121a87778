import assert from "node:assert/strict";
import { programLog } from "../../src/program/program_log.ts";

/** Runs `fn` with console.log and console.error kept rather than written. */
function captured(fn: () => void): { out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const { log, error } = console;
  console.log = (...args: unknown[]) => out.push(args.join(" "));
  console.error = (...args: unknown[]) => err.push(args.join(" "));
  try {
    fn();
  } finally {
    console.log = log;
    console.error = error;
  }
  return { out, err };
}

Deno.test("text: info on standard output, problems on standard error, fields after the message", () => {
  const log = programLog("text");
  const { out, err } = captured(() => {
    log.info("Listening", { port: 8000 });
    log.error("Redis connection lost", { url: "redis://127.0.0.1:6379" });
    log.report("Redis connection back", "info");
  });
  assert.deepEqual(out, ["Listening 8000"]);
  assert.deepEqual(err, [
    "Redis connection lost redis://127.0.0.1:6379",
    "Redis connection back",
  ]);
});

Deno.test("json: one object per line with time, level, message and the fields", () => {
  const log = programLog("json");
  const before = Date.now();
  const { out, err } = captured(() => {
    log.info("Listening", { port: 8000 });
    log.report("Redis connection lost", "error");
    log.report("Redis connection back", "info");
  });
  const lines = [...out, ...err].map((line) => JSON.parse(line));
  assert.deepEqual(lines.map(({ time: _, ...rest }) => rest), [
    { level: "info", message: "Listening", port: 8000 },
    { level: "error", message: "Redis connection lost" },
    { level: "info", message: "Redis connection back" },
  ]);
  assert.equal(out.length, 1);
  for (const { time } of lines) {
    assert.equal(new Date(time).toISOString(), time);
    assert.ok(Date.parse(time) >= before - 1000);
  }
});

Deno.test("the banner is the same plain line on standard output in either format", () => {
  for (const format of ["text", "json"] as const) {
    const { out, err } = captured(() =>
      programLog(format).banner(
        "Listening on http://[::1]:8000/ (services: quote)",
      )
    );
    assert.deepEqual(out, [
      "Listening on http://[::1]:8000/ (services: quote)",
    ]);
    assert.deepEqual(err, []);
  }
});

Deno.test("a fault goes to standard error with its stack; a thrown non-error as text", () => {
  for (const format of ["text", "json"] as const) {
    const log = programLog(format);
    const { out, err } = captured(() => {
      log.fault("fault in GET /quote:", new TypeError("boom"));
      log.fault("fault in GET /:", "a string");
    });
    assert.deepEqual(out, []);
    assert.equal(err.length, 2);
    const [first = "", second = ""] = err;
    assert.match(first, /fault in GET \/quote:/);
    assert.match(first, /TypeError: boom/);
    assert.match(
      first,
      /program_log_test\.ts/,
      "the stack, where it was thrown",
    );
    assert.match(second, /a string/);
    if (format === "json") {
      assert.equal(JSON.parse(first).level, "error");
      assert.match(JSON.parse(first).error, /^TypeError: boom\n\s+at /);
    }
  }
});
