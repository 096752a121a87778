import assert from "node:assert/strict";
import { Deadlines } from "../../src/timers/deadlines.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Deadlines of `timeoutMs` that tell, per item, how long after its start it expired. */
function watched(timeoutMs: number) {
  const started = new Map<string, number>();
  const waited = new Map<string, number>();
  const expired = new Map<string, PromiseWithResolvers<void>>();
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
      deadlines.add(item);
    },
    expiry: (item: string) => expired.get(item)!.promise,
  };
}

Deno.test("deadlines: each wait expires once its length has passed, never earlier, oldest first; a late delete says so", async () => {
  const { deadlines, waited, start, expiry } = watched(100);
  start("first");
  await sleep(60);
  start("second");
  await expiry("first");
  assert.ok(waited.get("first")! >= 100, `after ${waited.get("first")} ms`);
  assert.equal(waited.get("second"), undefined, "the second is not due yet");
  assert.equal(deadlines.delete("first"), false);
  await expiry("second");
  const second = waited.get("second")!;
  assert.ok(second >= 100, `after ${second} ms`);
  // Timers may fire late on a busy machine: the bound is generous.
  assert.ok(second < 1000, `after ${second} ms`);
  assert.deepEqual([...deadlines.items()], []);
});

Deno.test("deadlines: a wait ended in time never expires; the others are listed in start order", async () => {
  const { deadlines, waited, start, expiry } = watched(40);
  start("a");
  start("b");
  start("c");
  assert.deepEqual([...deadlines.items()], ["a", "b", "c"]);
  assert.equal(deadlines.delete("b"), true);
  assert.equal(deadlines.delete("b"), false);
  assert.deepEqual([...deadlines.items()], ["a", "c"]);
  await Promise.all([expiry("a"), expiry("c")]);
  await sleep(80);
  assert.equal(waited.get("b"), undefined);
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
  assert.deepEqual([...deadlines.items()], []);
});
