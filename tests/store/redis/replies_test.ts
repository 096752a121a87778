/**
 * Redis's replies are checked before they are believed: the `recent`
 * script's reply reads as the memory store answers the same question, and
 * a reply of any other shape is a fault.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import {
  checkReply,
  messageId,
  messagePage,
  oneOf,
  recentMessages,
  UnexpectedReply,
} from "../../../src/store/redis/replies.ts";
import { MemoryStore } from "../../../src/store/memory_store.ts";

/** What the `recent` script answers for ids 1..newest with the last `history` retained. */
function scriptReply(
  newest: number,
  history: number,
  afterId: number,
  limit: number,
): unknown[] {
  const count = Math.min(newest - afterId, limit);
  if (count <= 0) return [newest, 0];
  const oldest = newest === 0 ? 0 : Math.max(1, newest - history + 1);
  const entries = [];
  for (let id = newest; id > newest - count && id >= oldest; id--) {
    if (id > afterId) entries.push(`${id} {"i":${id}}`);
  }
  return [newest, oldest, ...entries];
}

Deno.test("the recent reply reads as the memory store answers: the same messages, newest id and missed count", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 5, max: 20 }),
      fc.integer({ min: 0, max: 60 }),
      fc.integer({ min: 0, max: 70 }),
      fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
      (history, newest, afterId, limit) => {
        const memory = new MemoryStore({ history });
        for (let i = 1; i <= newest; i++) memory.addMessage(`{"i":${i}}`);
        const expected = memory.recentMessages(afterId, limit);
        const read = recentMessages(
          scriptReply(newest, history, afterId, limit ?? history),
          afterId,
          (limit ?? history) >= history,
        );
        assert.deepEqual(read, expected);
      },
    ),
  );
});

Deno.test("a reply of another shape is a fault, never a value made up from it", () => {
  for (
    const reply of [
      null,
      "5",
      [5],
      ["x", 0],
      [5, 0, "5"],
      [5, 0, "no-id-here"],
      [5, 1, '6 {"beyond":"the newest"}'],
      [5, 1, '2 {"at or below":"the reader"}'],
      [-1, 0],
    ]
  ) {
    assert.throws(
      () => recentMessages(reply, 2),
      UnexpectedReply,
      JSON.stringify(reply),
    );
  }
  assert.throws(() => oneOf("register", 1, ["registered"]), UnexpectedReply);
  assert.throws(() => oneOf("register", "Registered", ["registered"]));
  assert.equal(oneOf("register", "registered", ["registered"]), "registered");
  for (const id of ["1.5", "1e3", "", "-2", 2 ** 53, "99999999999999999"]) {
    assert.throws(() => messageId("addMessage", id), UnexpectedReply, `${id}`);
  }
  assert.equal(messageId("addMessage", "42"), 42);
  assert.equal(messageId("addMessage", 42), 42);
  assert.throws(() => checkReply(["1", "2", "g"]), UnexpectedReply);
  assert.throws(() => checkReply(["1.5", "2", null, null]), UnexpectedReply);
  assert.deepEqual(checkReply(["1", "500000", null, null]), {
    redisNow: 1500,
    generation: null,
    newestId: 0,
  });
});

Deno.test("an older page out of order, at or above its bound, or too long is a fault", () => {
  for (
    const reply of [
      null,
      ["4 {}", "5 {}"],
      ["4 {}", "4 {}"],
      ["6 {}"],
      ["5 {}"],
      ["4 {}", "3 {}", "2 {}", "1 {}"],
      ["x {}"],
    ]
  ) {
    assert.throws(
      () => messagePage(reply, 5, 2),
      UnexpectedReply,
      JSON.stringify(reply),
    );
  }
  assert.deepEqual(messagePage(["4 {}", "3 {}", "2 {}"], 5, 2), {
    messages: [{ id: 4, json: "{}" }, { id: 3, json: "{}" }],
    next: 3,
  });
  assert.deepEqual(messagePage(["4 {}", "3 {}"], 5, 2).next, null);
});

Deno.test("ids that skip (writes Redis lost) above the reader's count as missed, as ids that left the history do", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 5, max: 20 }),
      fc.integer({ min: 1, max: 40 }),
      fc.integer({ min: 1, max: 10 }),
      fc.integer({ min: 0, max: 60 }),
      fc.integer({ min: 0, max: 10 }),
      (history, kept, lost, afterId, after) => {
        // Ids 1..kept stored, kept+1..kept+lost lost, then `after` more.
        const newest = kept + lost + after;
        const stored = [
          ...Array.from({ length: kept }, (_, i) => i + 1),
          ...Array.from({ length: after }, (_, i) => kept + lost + i + 1),
        ].slice(-history);
        const reader = Math.min(afterId, newest);
        const count = Math.min(newest - reader, history);
        const entries = count <= 0 ? [] : stored.slice(-count).reverse()
          .filter((id) => id > reader).map((id) => `${id} {"i":${id}}`);
        const reply = count <= 0
          ? [newest, 0]
          : [newest, stored[0] ?? 0, ...entries];
        const read = recentMessages(reply, reader);
        const unseen = newest - reader - read.messages.length;
        assert.equal(read.missed, unseen);
        assert.deepEqual(
          read.messages.map((m) => m.id),
          stored.filter((id) => id > reader),
        );
      },
    ),
  );
});
