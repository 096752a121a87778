/** The in-memory rate-limit buckets: GCRA's arithmetic, and memory that stays bounded whatever number of clients write. */
import assert from "node:assert/strict";
import { TokenBuckets } from "../../src/store/token_buckets.ts";

const rate = { burst: 3, periodMs: 1000 };

function clocked(maxClients?: number) {
  const clock = { now: 1_000_000 };
  const buckets = new TokenBuckets(maxClients, () => clock.now);
  return { clock, buckets };
}

Deno.test("waitOf tells the wait take would answer, and spends nothing", () => {
  const { clock, buckets } = clocked();
  assert.equal(buckets.waitOf("a", rate), 0, "an unknown client may write");
  for (let i = 0; i < 3; i++) {
    assert.equal(buckets.waitOf("a", rate), 0);
    assert.equal(buckets.take("a", rate), 0);
  }
  assert.equal(buckets.waitOf("a", rate), 1000);
  assert.equal(buckets.waitOf("a", rate), 1000, "asking spends nothing");
  clock.now += 250;
  assert.equal(buckets.waitOf("a", rate), buckets.take("a", rate));
  clock.now += 750;
  assert.equal(buckets.waitOf("a", rate), 0);
});

Deno.test("a burst passes at once, then one write per period, and the wait is exact", () => {
  const { clock, buckets } = clocked();
  assert.deepEqual([1, 2, 3].map(() => buckets.take("a", rate)), [0, 0, 0]);
  assert.equal(buckets.take("a", rate), 1000);
  clock.now += 400;
  assert.equal(buckets.take("a", rate), 600, "a refused write spends nothing");
  clock.now += 600;
  assert.equal(buckets.take("a", rate), 0);
  assert.equal(buckets.take("a", rate), 1000);
  // Other clients have their own buckets.
  assert.equal(buckets.take("b", rate), 0);
  // A bucket left alone fills up to the burst, not beyond.
  clock.now += 60_000;
  assert.deepEqual([1, 2, 3, 4].map(() => buckets.take("a", rate)), [
    0,
    0,
    0,
    1000,
  ]);
});

Deno.test("10,000 addresses are forgotten once their buckets are full again", () => {
  const { clock, buckets } = clocked();
  for (let round = 0; round < 10; round++) {
    for (let i = 0; i < 10_000; i++) {
      assert.equal(buckets.take(`10.${round}.${i >> 8}.${i & 255}`, rate), 0);
      clock.now += 1;
    }
    assert.ok(buckets.size <= 20_000, `round ${round}: ${buckets.size}`);
    clock.now += rate.burst * rate.periodMs;
  }
  buckets.take("last", rate);
  assert.equal(buckets.size, 1);
});

Deno.test("past maxClients the client tracked longest is forgotten, so memory has a ceiling", () => {
  const { buckets } = clocked(1000);
  for (let i = 0; i < 10_000; i++) buckets.take(`client ${i}`, rate);
  assert.equal(buckets.size, 1000);
  // The newest clients are the ones kept: their allowance is still spent.
  buckets.take("client 9999", rate);
  buckets.take("client 9999", rate);
  assert.equal(buckets.take("client 9999", rate), 1000);
});

Deno.test("at the cap a client writing again keeps its place: the one tracked first is forgotten", () => {
  const { buckets } = clocked(2);
  buckets.take("a", rate);
  buckets.take("b", rate);
  buckets.take("a", rate);
  buckets.take("c", rate);
  assert.equal(buckets.size, 2);
  // "a", which had spent two writes, was forgotten: its bucket is full again.
  assert.deepEqual([1, 2, 3, 4].map(() => buckets.take("a", rate)), [
    0,
    0,
    0,
    1000,
  ]);
});
