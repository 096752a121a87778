/** The messages as every store keeps them (`MessageLog`), run against each backend. */
import assert from "node:assert/strict";
import type { MessageLog } from "../../src/store/store.ts";
import { storeTest } from "../_support/call.ts";
import { itemAt } from "../_support/item_at.ts";

storeTest(
  "messages keep the newest `history`, newest first",
  async (store: MessageLog) => {
    assert.deepEqual(await store.newestMessages(5), []);
    for (let i = 0; i < 20; i++) await store.addMessage(JSON.stringify({ i }));
    assert.deepEqual(
      (await store.newestMessages(5)).map((m) => JSON.parse(m).i),
      [19, 18, 17, 16, 15],
    );
    assert.deepEqual(
      (await store.newestMessages(100)).map((m) => JSON.parse(m).i),
      [19, 18, 17, 16, 15, 14, 13],
    );
  },
  { history: 7 },
);

storeTest(
  "message ids start at 1 and are consecutive",
  async (store: MessageLog) => {
    const ids = [];
    for (let i = 0; i < 4; i++) ids.push(await store.addMessage(`{"i":${i}}`));
    assert.deepEqual(ids, [1, 2, 3, 4]);
    assert.deepEqual(
      await store.newestMessages(5),
      ['{"i":3}', '{"i":2}', '{"i":1}', '{"i":0}'],
    );
  },
);

storeTest(
  "recentMessages answers what is retained above an id, oldest first, and how many are gone",
  async (store: MessageLog) => {
    assert.deepEqual(await store.recentMessages(0), {
      messages: [],
      newestId: 0,
      missed: 0,
    });
    for (let i = 1; i <= 12; i++) await store.addMessage(`{"i":${i}}`);
    // history 7: ids 6..12 retained
    const all = await store.recentMessages(0);
    assert.deepEqual(all.messages.map((m) => m.id), [6, 7, 8, 9, 10, 11, 12]);
    assert.equal(itemAt(all.messages, 0).json, '{"i":6}');
    assert.equal(all.newestId, 12);
    assert.equal(all.missed, 5);
    const some = await store.recentMessages(9);
    assert.deepEqual(some.messages.map((m) => m.id), [10, 11, 12]);
    assert.equal(some.missed, 0);
    assert.deepEqual(
      (await store.recentMessages(2)).missed,
      3,
      "ids 3, 4, 5 are gone",
    );
    const upToDate = await store.recentMessages(12);
    assert.deepEqual(upToDate.messages, []);
    assert.equal(upToDate.missed, 0);
    const newest = await store.recentMessages(0, 5);
    assert.deepEqual(newest.messages.map((m) => m.id), [8, 9, 10, 11, 12]);
  },
  { history: 7 },
);
