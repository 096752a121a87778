/**
 * The program's numeric options and the library's options are one set of
 * limits: a value the program refuses at start, the library refuses when
 * the handler or store is built, and the other way round.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { parseFlags } from "../../src/program/config.ts";
import { createHandler } from "../../src/program/app.ts";
import { MemoryStore } from "../../src/store/memory_store.ts";

const SEED = 20261124;

const noEnv = () => undefined;

function accepts(build: () => unknown): boolean {
  try {
    build();
    return true;
  } catch {
    return false;
  }
}

const LIMITS: [flag: string, build: (value: number) => unknown][] = [
  ["max-body-bytes", (maxBodyBytes) => createHandler({ maxBodyBytes })],
  ["body-timeout-ms", (bodyTimeoutMs) => createHandler({ bodyTimeoutMs })],
  ["heartbeat-ms", (heartbeatMs) => createHandler({ heartbeatMs })],
  ["max-streams", (maxStreams) => createHandler({ maxStreams })],
  [
    "max-streams-per-client",
    (maxStreamsPerClient) => createHandler({ maxStreamsPerClient }),
  ],
  ["history", (history) => new MemoryStore({ history })],
  ["max-users", (maxUsers) => new MemoryStore({ maxUsers })],
];

const EDGES = [
  0,
  1,
  4,
  5,
  9,
  10,
  1_000_000,
  1_000_001,
  3_600_000,
  3_600_001,
  10_000_000,
  10_000_001,
  100_000_000,
  100_000_001,
  2 ** 30,
  2 ** 30 + 1,
];

Deno.test("a limit the program refuses, the library refuses, and the other way round", () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...LIMITS),
      fc.oneof(
        fc.constantFrom(...EDGES),
        fc.integer({ min: 0, max: 100 }),
        fc.integer({ min: 0, max: 2 ** 34 }),
      ),
      ([flag, build], value) => {
        assert.equal(
          accepts(() => build(value)),
          accepts(() => parseFlags([`--${flag}=${value}`], noEnv)),
          `--${flag}=${value}`,
        );
      },
    ),
    { seed: SEED, numRuns: 500 },
  );
});

Deno.test("a rate the program refuses, the library refuses, and the other way round", () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.integer({ min: 0, max: 2_000_000_000 }),
        fc.constantFrom(0, 1, 1_000_000, 1_000_000_000, 1_000_000_001),
      ),
      fc.oneof(
        fc.integer({ min: 0, max: 99_999_999 }),
        fc.constantFrom(0, 1, 86_400, 86_400_000, 86_400_001),
      ),
      (burst, periodMs) => {
        const seconds = (periodMs / 1000).toFixed(3);
        const rate = { burst, periodMs };
        for (
          const [flag, build] of [
            ["rate-limit", () => createHandler({ rateLimit: rate })],
            ["auth-failures", () => createHandler({ authFailures: rate })],
          ] as const
        ) {
          assert.equal(
            accepts(build),
            accepts(() => parseFlags([`--${flag}=${burst}/${seconds}`], noEnv)),
            `--${flag}=${burst}/${seconds}`,
          );
        }
      },
    ),
    { seed: SEED, numRuns: 500 },
  );
});
