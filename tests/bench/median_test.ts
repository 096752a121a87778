import assert from "node:assert/strict";
import { median, percentile } from "../../bench/median.ts";

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

Deno.test("percentile: p of n sorted values is the one at floor(n p), the last for p near 1", () => {
  const values = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal(percentile(values, 0.5), 51);
  assert.equal(percentile(values, 0.99), 100);
  assert.equal(percentile([7], 0.99), 7);
});

Deno.test("percentile: NaN for no values, so a table shows that nothing was measured", () => {
  assert.ok(Number.isNaN(percentile([], 0.5)));
});
