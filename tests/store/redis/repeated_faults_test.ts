import assert from "node:assert/strict";
import { repeatedFaults } from "../../../src/store/redis/repeated_faults.ts";

Deno.test("a fault repeated within its window is logged once, then once more with its count", () => {
  const lines: string[] = [];
  const faults = repeatedFaults((line) => lines.push(line), 10_000);
  for (let i = 0; i < 480; i++) {
    faults.report("OOM", "redis: OOM command not allowed");
  }
  faults.close();
  assert.deepEqual(lines, [
    "redis: OOM command not allowed",
    "redis: OOM command not allowed (479 more times in 10 s)",
  ]);
});
