import assert from "node:assert/strict";
import { CommandDeadlines } from "../../../src/store/redis/command_deadlines.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts a wait on `deadlines` and tells when it expired. */
function timed(deadlines: CommandDeadlines) {
  const started = performance.now();
  let expiredAt: number | undefined;
  const { promise: expired, resolve } = Promise.withResolvers<void>();
  const waiting = deadlines.start(() => {
    expiredAt = performance.now();
    resolve();
  });
  return {
    waiting,
    expired,
    started,
    /** Milliseconds from the start to the expiry, if it expired. */
    waited: () => expiredAt === undefined ? undefined : expiredAt - started,
  };
}

Deno.test("command deadlines: each expires once its timeout has passed, never earlier, oldest first, and a late finish says so", async () => {
  const deadlines = new CommandDeadlines(100);
  const first = timed(deadlines);
  await sleep(40);
  const second = timed(deadlines);
  await first.expired;
  assert.ok(first.waited()! >= 100, `expired after ${first.waited()} ms`);
  assert.equal(second.waited(), undefined, "the second is not due yet");
  assert.equal(deadlines.finish(first.waiting), false);
  await second.expired;
  assert.ok(second.waited()! >= 100, `expired after ${second.waited()} ms`);
  assert.equal(deadlines.size, 0);
});

Deno.test({
  name:
    "command deadlines: one finished in time never expires, and once none waits no timer is left behind",
  // Fails the test if a timer is still pending at its end.
  sanitizeOps: true,
}, async () => {
  const deadlines = new CommandDeadlines(50);
  const kept = timed(deadlines);
  const done = timed(deadlines);
  assert.equal(deadlines.finish(done.waiting), true);
  await kept.expired;
  assert.equal(done.waited(), undefined);
  const last = timed(deadlines);
  assert.equal(deadlines.finish(last.waiting), true);
});

Deno.test({
  name: "command deadlines: after close nothing expires and no timer is left",
  sanitizeOps: true,
}, async () => {
  const deadlines = new CommandDeadlines(20);
  const waiting = timed(deadlines);
  deadlines.close();
  await sleep(60);
  assert.equal(waiting.waited(), undefined);
  assert.equal(deadlines.size, 0);
});
