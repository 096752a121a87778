import assert from "node:assert/strict";
import { median } from "../../bench/median.ts";

Deno.test("median: the middle of an odd count, whatever the order", () => {
  assert.equal(median([9, 1, 5]), 5);
  assert.equal(median([4]), 4);
});

Deno.test("median: the mean of the two middle values of an even count", () => {
  assert.equal(median([10, 2, 4, 8]), 6);
});

Deno.test("median: leaves the rounds it is given in their order", () => {
  const rounds = [3, 1, 2];
  median(rounds);
  assert.deepEqual(rounds, [3, 1, 2]);
});
