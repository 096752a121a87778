/**
 * `deno task verify`: the consistency checker. Runs each fault scenario on a
 * fresh Redis and two programs, with writers and readers on both, and
 * reconciles what clients were told with what the store holds and what
 * readers received (definitions in `reconcile.ts`). Exits 1 when any figure
 * the contract fixes at 0 is not, naming each; 2 on a bad flag.
 * @module
 */

import { flagsOf, usageError } from "../../bench/cli.ts";
import { redisServerPath } from "../../tests/_support/redis_server.ts";
import { SCENARIOS } from "./faults.ts";
import { formatResult } from "./report.ts";
import { passed, runScenario } from "./run.ts";

const USAGE = `deno task verify [flags]

Starts a throw-away redis-server and two programs on it, runs writers and
EventSource-like readers against both while injecting one fault scenario,
then reconciles what clients were told with what the store holds and what
readers received. Prints a table per scenario; exits 1 if any figure the
contract fixes at 0 is not.

  --scenario=NAME    a scenario, or a comma-separated list, or all (default)
  --duration=S       seconds of faults per scenario (default 20)
  --ops=N            writes per writer at most (default 2000)
  --writers=N        concurrent writers over both programs (default 12)
  --readers=N        message readers on each program (default 3)
  --pause-ms=N       pause between one writer's writes (default 20)
  --checkout=DIR     run DIR/main.ts (another checkout) instead of this one
  --help             this text

Scenarios:
${
  Object.values(SCENARIOS).map((s) => `  ${s.name.padEnd(20)} ${s.description}`)
    .join("\n")
}`;

const flags = flagsOf({
  scenario: { type: "string", default: "all" },
  duration: { type: "string", default: "20" },
  ops: { type: "string", default: "2000" },
  writers: { type: "string", default: "12" },
  readers: { type: "string", default: "3" },
  "pause-ms": { type: "string", default: "20" },
  checkout: { type: "string" },
}, USAGE);

function count(name: keyof typeof flags, min: number): number {
  const value = Number(flags[name]);
  if (!Number.isInteger(value) || value < min) {
    usageError(`--${name} must be a whole number of at least ${min}`);
  }
  return value;
}

const names = flags.scenario === "all"
  ? Object.keys(SCENARIOS)
  : flags.scenario!.split(",");
// Own keys only: `in` would take Object.prototype's names (toString) for scenarios.
const scenarios = names.map((name) =>
  (Object.hasOwn(SCENARIOS, name) ? SCENARIOS[name] : undefined) ??
    usageError(`--scenario: no scenario ${name}`)
);
const checkout = flags.checkout;
if (checkout !== undefined) {
  for (const file of ["main.ts", "deno.json"]) {
    try {
      Deno.statSync(`${checkout}/${file}`);
    } catch {
      usageError(`--checkout: no ${file} in ${checkout}`);
    }
  }
}
const options = {
  durationMs: count("duration", 1) * 1000,
  opsPerWriter: count("ops", 1),
  writers: count("writers", 1),
  readers: count("readers", 1),
  pauseMs: count("pause-ms", 0),
  root: checkout,
};
if (!redisServerPath()) {
  console.error("error: redis-server is not on PATH");
  Deno.exit(1);
}

const failed: string[] = [];
for (const scenario of scenarios) {
  const result = await runScenario(scenario, options);
  console.log(formatResult(result));
  if (!passed(result)) failed.push(scenario.name);
}
if (failed.length > 0) {
  console.log(`FAILED: ${failed.join(", ")}`);
  Deno.exit(1);
}
console.log(`PASSED: ${names.join(", ")}`);
