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

/** The ids of a page, and its `next`, for comparing whole pages at once. */
async function pageOf(
  store: MessageLog,
  before: number | undefined,
  limit: number,
): Promise<{ ids: number[]; next: number | null }> {
  const page = await store.olderMessages(before, limit);
  for (const m of page.messages) {
    assert.equal(JSON.parse(m.json).i, m.id, "each message keeps its own id");
  }
  return { ids: page.messages.map((m) => m.id), next: page.next };
}

/** Pages back from the newest, `limit` at a time, while `between` runs before each page; every id answered. */
async function pageBack(
  store: MessageLog,
  limit: number,
  between: () => Promise<unknown> = () => Promise.resolve(),
): Promise<number[]> {
  const ids: number[] = [];
  let before: number | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const [page] = await Promise.all([pageOf(store, before, limit), between()]);
    ids.push(...page.ids);
    if (page.next === null) return ids;
    before = page.next;
  }
  throw new Error("paging did not end");
}

storeTest(
  "an empty history answers an empty page and no next, whatever the bound",
  async (store: MessageLog) => {
    for (const before of [undefined, 1, 2, 1000]) {
      assert.deepEqual(await pageOf(store, before, 20), {
        ids: [],
        next: null,
      });
    }
  },
);

storeTest(
  "pages cut the retained history at their bounds, newest first, next null at its end",
  async (store: MessageLog) => {
    for (let i = 1; i <= 12; i++) await store.addMessage(`{"i":${i}}`);
    // history 7: ids 6..12 retained
    assert.deepEqual(await pageOf(store, undefined, 3), {
      ids: [12, 11, 10],
      next: 10,
    });
    assert.deepEqual(await pageOf(store, 10, 3), { ids: [9, 8, 7], next: 7 });
    assert.deepEqual(await pageOf(store, 7, 3), { ids: [6], next: null });
    assert.deepEqual(await pageOf(store, 7, 1), { ids: [6], next: null });
    assert.deepEqual(await pageOf(store, undefined, 7), {
      ids: [12, 11, 10, 9, 8, 7, 6],
      next: null,
    }, "a page that ends exactly at the oldest retained has no next");
    assert.deepEqual(await pageOf(store, undefined, 6), {
      ids: [12, 11, 10, 9, 8, 7],
      next: 7,
    });
    assert.deepEqual(await pageOf(store, 13, 2), { ids: [12, 11], next: 11 });
  },
  { history: 7 },
);

storeTest(
  "a bound that never was an id pages like one, and messages that left the history are not answered",
  async (store: MessageLog) => {
    for (let i = 1; i <= 12; i++) await store.addMessage(`{"i":${i}}`);
    // history 7: ids 1..5 have left
    assert.deepEqual(await pageOf(store, 1_000_000, 2), {
      ids: [12, 11],
      next: 11,
    });
    assert.deepEqual(await pageOf(store, 2 ** 53 - 1, 1), {
      ids: [12],
      next: 12,
    });
    for (const before of [1, 2, 5, 6]) {
      assert.deepEqual(
        await pageOf(store, before, 20),
        { ids: [], next: null },
        `before ${before}`,
      );
    }
    assert.deepEqual(await pageOf(store, 8, 20), { ids: [7, 6], next: null });
    assert.deepEqual(await pageBack(store, 2), [12, 11, 10, 9, 8, 7, 6]);
  },
  { history: 7 },
);

storeTest(
  "posts while paging add nothing twice and leave no gap in what is retained",
  async (store: MessageLog) => {
    for (let i = 1; i <= 30; i++) await store.addMessage(`{"i":${i}}`);
    let posted = 30;
    const postTwo = () =>
      Promise.all([
        store.addMessage(`{"i":${++posted}}`),
        store.addMessage(`{"i":${++posted}}`),
      ]);
    const ids = await pageBack(store, 4, postTwo);
    // The first page was read beside the first posts: it starts at 30 or
    // above, and goes down one by one to the oldest message there is.
    const top = itemAt(ids, 0);
    assert.ok(top >= 30 && top <= 32, `first page starts at ${top}`);
    assert.deepEqual(ids, Array.from({ length: top }, (_, i) => top - i));
  },
  { history: 1000 },
);

storeTest(
  "paging while posts push the oldest out answers each id once, one by one, down to what is retained",
  async (store: MessageLog) => {
    for (let i = 1; i <= 20; i++) await store.addMessage(`{"i":${i}}`);
    let posted = 20;
    const postThree = () =>
      Promise.all([1, 2, 3].map(() => store.addMessage(`{"i":${++posted}}`)));
    const ids = await pageBack(store, 3, postThree);
    const top = itemAt(ids, 0);
    assert.deepEqual(
      ids,
      Array.from({ length: ids.length }, (_, i) => top - i),
    );
    // Each page of 3 races 3 posts that trim 3 of the oldest: paging ends
    // once it meets what has left, never with an id that had already gone.
    assert.ok(ids.length < 20, `${ids.length} ids answered`);
    assert.ok(ids.at(-1)! > 1, "the oldest had left the history");
  },
  { history: 20 },
);

storeTest(
  "paging back through 1,000 messages answers every id once, in order",
  async (store: MessageLog) => {
    for (let i = 1; i <= 1000; i++) await store.addMessage(`{"i":${i}}`);
    const expected = Array.from({ length: 1000 }, (_, i) => 1000 - i);
    assert.deepEqual(await pageBack(store, 37), expected);
    assert.deepEqual(await pageBack(store, 100), expected);
  },
  { history: 1000 },
);

storeTest(
  "every bound and limit answers what a model of the retained ids says",
  async (store: MessageLog) => {
    for (let i = 1; i <= 12; i++) await store.addMessage(`{"i":${i}}`);
    const retained = [12, 11, 10, 9, 8, 7, 6];
    for (
      const before of [
        undefined,
        ...Array.from({ length: 15 }, (_, i) => i + 1),
      ]
    ) {
      for (let limit = 1; limit <= 8; limit++) {
        const below = retained.filter((id) => id < (before ?? Infinity));
        const ids = below.slice(0, limit);
        const next = below.length > limit ? ids.at(-1)! : null;
        assert.deepEqual(
          await pageOf(store, before, limit),
          { ids, next },
          `before ${before}, limit ${limit}`,
        );
      }
    }
  },
  { history: 7 },
);
