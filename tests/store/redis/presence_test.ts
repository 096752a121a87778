/**
 * One process's presence (`RedisPresence`) over a connection whose replies
 * the test hands out, in the orders a real one may deliver them: what the
 * process sends Redis when it learns that its record was swept while it
 * stalled. The scripts themselves, on a real Redis, are in
 * `presence_scripts_test.ts`; the whole program frozen and thawed is in
 * `presence_process_test.ts`.
 */

import assert from "node:assert/strict";
import { RedisKernel } from "../../../src/store/redis/kernel.ts";
import { RedisPresence } from "../../../src/store/redis/presence.ts";
import type { RedisConnection } from "../../../src/store/redis/redis_connection.ts";

/** One script the process ran, and its reply, given when the test says. */
interface Call {
  script: string;
  args: string[];
  answer: (reply: unknown) => void;
  /** As a command timed out or a connection lost: Redis may have run it or not. */
  fail: (error: Error) => void;
}

/**
 * A presence over a connection that answers beats with "record kept" and
 * presence scripts with `ok` while `auto` says so, and otherwise leaves
 * them waiting in `calls` for the test to answer.
 */
function harness(heartbeatMs: number) {
  const calls: Call[] = [];
  const auto = { beats: true, presence: true };
  const client = {
    isReady: true,
    onReady: () => {},
    run: (script: string, _keys: string[], args: string[]) =>
      new Promise<unknown>((answer, fail) => {
        calls.push({ script, args, answer, fail });
        if (script === "presenceBeat" && auto.beats) answer([1, 0]);
        if (script === "presence" && auto.presence) answer("ok");
      }),
  };
  const connection = client as unknown as RedisConnection;
  const kernel = new RedisKernel(connection, connection, {
    prefix: "",
    timeoutMs: 60_000,
    maxPending: 100,
    replicas: 0,
  });
  const presence = new RedisPresence(kernel, heartbeatMs);
  /** The presence scripts sent so far, as `mode +entered -left`. */
  const scripts = () =>
    calls.filter((c) => c.script === "presence").map(({ args }) => {
      const [, , mode, count, ...names] = args;
      const entered = names.slice(0, Number(count));
      const left = names.slice(Number(count));
      return `${mode} +${entered.join(",")} -${left.join(",")}`;
    });
  return {
    presence,
    calls,
    auto,
    scripts,
    close: async () => {
      auto.beats = auto.presence = true;
      for (const call of calls) {
        call.answer(call.script === "presence" ? "ok" : [1, 0]);
      }
      await presence.close();
      kernel.gate.close();
    },
  };
}

/** Waits until `condition` holds, checking every 10 ms for at most `ms`. */
async function until(condition: () => boolean, ms: number, what: string) {
  for (let waited = 0; !condition() && waited < ms; waited += 10) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.ok(condition(), `${what}, after ${ms} ms`);
}

Deno.test("a beat that finds the record gone while a change is unanswered has the whole set said again", async () => {
  // A beat every 10 ms.
  const h = harness(40);
  try {
    h.auto.beats = h.auto.presence = false;
    h.presence.online("ann");
    const change = h.calls.find((c) => c.script === "presence");
    assert.ok(change, "online() sends its change at once");
    // The process stalls (frozen) before it reads the change's reply; a
    // live process sweeps its record, ann goes offline. Thawed, it beats
    // before reading, and both replies come in one read: the change's
    // first, then the beat's saying the record was gone.
    await until(
      () => h.calls.some((c) => c.script === "presenceBeat"),
      1000,
      "no beat",
    );
    const beats = h.calls.filter((c) => c.script === "presenceBeat");
    change.answer("ok");
    beats[0]!.answer([0, 0]);
    for (const beat of beats.slice(1)) beat.answer([1, 0]);
    h.auto.beats = h.auto.presence = true;
    await until(
      () => h.scripts().includes("set +ann -"),
      1000,
      `ann never said again: ${h.scripts().join("; ")}`,
    );
  } finally {
    await h.close();
  }
});

Deno.test("a beat whose reply is lost may have been the one to find the record gone: the whole set is said again", async () => {
  // A beat every 10 ms.
  const h = harness(40);
  try {
    h.presence.online("ann");
    await until(() => h.scripts().length === 1, 500, "online() not sent");
    h.auto.beats = false;
    await until(
      () => h.calls.some((c) => c.script === "presenceBeat"),
      1000,
      "no beat",
    );
    // Redis stalled past the record's life: a live process swept it; this
    // beat ran once Redis woke, put the record back and said "gone", but its
    // reply came after the command had timed out. Every later beat finds the
    // record there.
    const beats = h.calls.filter((c) => c.script === "presenceBeat");
    beats[0]!.fail(new Error("the command timed out"));
    for (const beat of beats.slice(1)) beat.answer([1, 0]);
    h.auto.beats = true;
    await until(
      () => h.scripts().includes("set +ann -"),
      2000,
      `ann never said again: ${h.scripts().join("; ")}`,
    );
  } finally {
    await h.close();
  }
});

Deno.test("a change that finds the record gone has the whole set said again at once", async () => {
  // No beat within the test: only the change's reply can tell.
  const h = harness(60_000);
  try {
    h.auto.presence = false;
    h.presence.online("ann");
    // The process's first change: it never had a record, and held nothing.
    h.calls.at(-1)!.answer("gone");
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(h.scripts(), ["change +ann -"]);
    // Swept while it stalled: this change brings the record back, with bob alone.
    h.presence.online("bob");
    h.calls.at(-1)!.answer("gone");
    h.auto.presence = true;
    await until(
      () => h.scripts().length === 3,
      500,
      `the set not said at once: ${h.scripts().join("; ")}`,
    );
    assert.deepEqual(h.scripts(), [
      "change +ann -",
      "change +bob -",
      "set +ann,bob -",
    ]);
  } finally {
    await h.close();
  }
});
