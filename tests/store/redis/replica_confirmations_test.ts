/**
 * Confirmations on their own, over a connection whose `WAIT`s the test
 * answers: at most one waits at a time, the writes answered meanwhile share
 * the next, and a write is never confirmed by a `WAIT` on another session.
 */

import assert from "node:assert/strict";
import { CommandGate } from "../../../src/store/redis/command_gate.ts";
import { ReplicaConfirmations } from "../../../src/store/redis/replica_confirmations.ts";
import { itemAt } from "../../_support/item_at.ts";

function harness(replicas = 2) {
  const waits: { replicas: number; answer: (held: number) => void }[] = [];
  const connection = {
    isReady: true,
    session: 1,
    onReady() {},
    wait: (wanted: number) =>
      new Promise<number>((answer) => waits.push({ replicas: wanted, answer })),
  };
  const gate = new CommandGate(connection, { timeoutMs: 5000, maxPending: 10 });
  const confirmations = new ReplicaConfirmations(
    connection,
    gate,
    replicas,
    100,
  );
  return { connection, gate, confirmations, waits };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

Deno.test("one WAIT at a time: writes answered while it waits share the next one", async () => {
  const h = harness();
  try {
    const first = h.confirmations.confirm(1);
    const second = h.confirmations.confirm(1);
    const third = h.confirmations.confirm(1);
    assert.equal(h.waits.length, 1, "the others wait for the first");
    itemAt(h.waits, 0).answer(2);
    assert.equal(await first, true);
    await tick();
    assert.equal(h.waits.length, 2, "then one more WAIT, for both");
    assert.equal(itemAt(h.waits, 1).replicas, 2);
    itemAt(h.waits, 1).answer(1);
    assert.deepEqual(await Promise.all([second, third]), [false, false]);
  } finally {
    h.gate.close();
  }
});

Deno.test("a write of another session is never confirmed, and sends no WAIT", async () => {
  const h = harness(1);
  try {
    h.connection.session = 2;
    assert.equal(await h.confirmations.confirm(1), false);
    assert.equal(h.waits.length, 0);
    // A session that ends while its writes wait for the next WAIT: that
    // WAIT is not sent on the new connection.
    const waiting = h.confirmations.confirm(2);
    const queued = h.confirmations.confirm(2);
    h.connection.session = 3;
    itemAt(h.waits, 0).answer(1);
    assert.equal(
      await waiting,
      true,
      "answered on the connection it was sent on",
    );
    assert.equal(await queued, false);
    assert.equal(h.waits.length, 1);
  } finally {
    h.gate.close();
  }
});

Deno.test("a WAIT that fails confirms nothing", async () => {
  const h = harness(1);
  try {
    h.connection.isReady = false;
    assert.equal(await h.confirmations.confirm(1), false);
  } finally {
    h.gate.close();
  }
});
