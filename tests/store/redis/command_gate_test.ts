/**
 * The command gate on its own, over a connection whose replies the test
 * hands out: reads fail at the timeout, writes wait for their reply, a
 * stalled connection gets nothing new, and at most `maxPending` commands
 * wait at once. The same gate over a real, frozen Redis is in
 * `redis_store_test.ts` and `redis_store_multiprocess_test.ts`.
 */

import assert from "node:assert/strict";
import { CommandGate } from "../../../src/store/redis/command_gate.ts";
import { CommandFailed } from "../../../src/store/redis/redis_connection.ts";

/** A connection that is up or down at the test's word, and commands answered when the test says. */
function harness(options = { timeoutMs: 40, maxPending: 3 }) {
  const readyListeners: (() => void)[] = [];
  const connection = {
    isReady: true,
    onReady: (listener: () => void) => void readyListeners.push(listener),
  };
  const gate = new CommandGate(connection, options);
  let sent = 0;
  const replies: ((value: string) => void)[] = [];
  /** A command that counts as sent and waits for `answer`. */
  const command = () => {
    sent++;
    return new Promise<string>((resolve) => replies.push(resolve));
  };
  return {
    gate,
    connection,
    command,
    sent: () => sent,
    answerAll: (value: string) => {
      for (const reply of replies.splice(0)) reply(value);
    },
    reconnect: () => {
      connection.isReady = true;
      for (const listener of readyListeners) listener();
    },
  };
}

const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => "answered",
    (error) => error instanceof CommandFailed ? error.outcome : "fault",
  );

/** Waits until `condition` holds, checking every 10 ms for at most 5 s. */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.ok(condition(), "still not true after 5 s");
}

Deno.test("a read that is not answered fails at the timeout; a write waits for its reply", async () => {
  const h = harness();
  const read = outcome(h.gate.read(h.command));
  const write = h.gate.send(h.command);
  assert.equal(await read, "unknown");
  h.answerAll("late");
  assert.equal(await write, "late");
  h.gate.close();
});

Deno.test("once a command waited past the timeout, nothing new is sent until a reply comes", async () => {
  const h = harness();
  const write = h.gate.send(h.command);
  await until(() => !h.gate.open);
  assert.equal(await outcome(h.gate.read(h.command)), "unsent");
  assert.equal(await outcome(h.gate.send(h.command)), "unsent");
  assert.equal(h.sent(), 1, "refused without being sent");
  h.answerAll("ok");
  await write;
  assert.equal(h.gate.open, true);
  const again = h.gate.read(h.command);
  h.answerAll("ok");
  assert.equal(await again, "ok");
  h.gate.close();
});

Deno.test("a connection made anew is not stalled", async () => {
  const h = harness();
  h.gate.send(h.command).catch(() => {});
  await until(() => !h.gate.open);
  h.reconnect();
  assert.equal(h.gate.open, true);
  h.answerAll("ok");
  h.gate.close();
});

Deno.test("at most maxPending commands wait at once; past it a command is refused unsent, and a reply makes room", async () => {
  const h = harness({ timeoutMs: 10_000, maxPending: 3 });
  const waiting = [1, 2, 3].map(() => h.gate.send(h.command));
  assert.equal(await outcome(h.gate.send(h.command)), "unsent");
  assert.equal(h.sent(), 3);
  h.answerAll("ok");
  await Promise.all(waiting);
  const fourth = h.gate.send(h.command);
  h.answerAll("ok");
  assert.equal(await fourth, "ok");
  h.gate.close();
});

Deno.test("while the connection is down nothing is sent: unsent at once", async () => {
  const h = harness();
  h.connection.isReady = false;
  assert.equal(await outcome(h.gate.send(h.command)), "unsent");
  assert.equal(await outcome(h.gate.read(h.command)), "unsent");
  assert.equal(h.sent(), 0);
  h.gate.close();
});
