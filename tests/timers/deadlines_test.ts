import assert from "node:assert/strict";
import { Deadlines, type Wait } from "../../src/timers/deadlines.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Deadlines of `timeoutMs` that tell, per item, how long after its start it expired. */
function watched(timeoutMs: number) {
  const started = new Map<string, number>();
  const waited = new Map<string, number>();
  const expired = new Map<string, PromiseWithResolvers<void>>();
  const waits = new Map<string, Wait<string>>();
  const deadlines = new Deadlines<string>(timeoutMs, (item) => {
    waited.set(item, performance.now() - started.get(item)!);
    expired.get(item)!.resolve();
  });
  return {
    deadlines,
    waited,
    start(item: string) {
      started.set(item, performance.now());
      expired.set(item, Promise.withResolvers());
      waits.set(item, deadlines.add(item));
    },
    end: (item: string) => deadlines.delete(waits.get(item)!),
    expiry: (item: string) => expired.get(item)!.promise,
  };
}

Deno.test("deadlines: each wait expires once its length has passed, never earlier, oldest first; a late delete says so", async () => {
  const { deadlines, waited, start, end, expiry } = watched(100);
  start("first");
  await sleep(60);
  start("second");
  await expiry("first");
  assert.ok(waited.get("first")! >= 100, `after ${waited.get("first")} ms`);
  assert.equal(waited.get("second"), undefined, "the second is not due yet");
  assert.equal(end("first"), false);
  await expiry("second");
  const second = waited.get("second")!;
  assert.ok(second >= 100, `after ${second} ms`);
  // Timers may fire late on a busy machine: the bound is generous.
  assert.ok(second < 1000, `after ${second} ms`);
  assert.deepEqual(deadlines.clear(), [], "nothing waits any more");
});

/** Starts a to d, ends b (twice), then a and d, the list's two ends, and starts e. */
function endSome(w: ReturnType<typeof watched>) {
  for (const item of ["a", "b", "c", "d"]) w.start(item);
  assert.equal(w.end("b"), true);
  assert.equal(w.end("b"), false);
  assert.equal(w.end("a"), true);
  assert.equal(w.end("d"), true);
  w.start("e");
}

Deno.test("deadlines: ends in the middle and at both ends leave the others waiting, in start order", () => {
  const w = watched(60_000);
  endSome(w);
  assert.deepEqual(w.deadlines.clear(), ["c", "e"]);
  w.deadlines.close();
});

Deno.test("deadlines: a wait ended in time never expires; the others do", async () => {
  const w = watched(40);
  endSome(w);
  await Promise.all([w.expiry("c"), w.expiry("e")]);
  await sleep(80);
  assert.deepEqual([...w.waited.keys()].sort(), ["c", "e"]);
});

Deno.test({
  name: "deadlines: after close nothing expires and no timer is left",
  // Fails the test if a timer is still pending at its end.
  sanitizeOps: true,
}, async () => {
  const { deadlines, waited, start } = watched(20);
  start("a");
  deadlines.close();
  await sleep(60);
  assert.equal(waited.get("a"), undefined);
  assert.deepEqual(deadlines.clear(), []);
});

Deno.test({
  name:
    "deadlines: clear ends every wait at once and answers them in start order; none expires later",
  sanitizeOps: true,
}, async () => {
  const { deadlines, waited, start, end } = watched(20);
  start("a");
  start("b");
  assert.deepEqual(deadlines.clear(), ["a", "b"]);
  assert.equal(end("a"), false);
  assert.deepEqual(deadlines.clear(), [], "a second clear finds nothing");
  // A wait started after the clear still expires; the timer then stops.
  start("c");
  await sleep(80);
  assert.deepEqual([...waited.keys()], ["c"]);
});
