import assert from "node:assert/strict";
import { storeTest } from "../_support/call.ts";
import { itemAt } from "../_support/item_at.ts";

storeTest("registerUser is register-if-absent", async (store) => {
  assert.equal(await store.registerUser("alice", "t1"), "registered");
  assert.equal(await store.registerUser("alice", "t2"), "exists");
  assert.equal(await store.tokenOf("alice"), "t1");
  assert.equal(await store.tokenOf("bob"), undefined);
});

storeTest(
  "registerUser stops at maxUsers and frees a place on removal",
  async (store) => {
    assert.equal(await store.registerUser("a", "t"), "registered");
    assert.equal(await store.registerUser("b", "t"), "registered");
    assert.equal(await store.registerUser("c", "t"), "full");
    assert.equal(await store.registerUser("a", "t"), "exists");
    assert.equal(await store.removeUser("a", "t"), true);
    assert.equal(await store.registerUser("c", "t"), "registered");
    assert.deepEqual(await store.listUsers(), ["b", "c"]);
  },
  { maxUsers: 2 },
);

storeTest(
  "removeUser removes only while the token still matches",
  async (store) => {
    await store.registerUser("alice", "old");
    assert.equal(await store.removeUser("alice", "other"), false);
    assert.equal(await store.removeUser("alice", "old"), true);
    assert.equal(await store.removeUser("alice", "old"), false);
    await store.registerUser("alice", "new");
    assert.equal(await store.removeUser("alice", "old"), false);
    assert.equal(await store.tokenOf("alice"), "new");
  },
);

storeTest(
  "listUsers keeps registration order; a re-registered name goes last",
  async (store) => {
    for (const name of ["c", "a", "b"]) await store.registerUser(name, "t");
    await store.removeUser("c", "t");
    await store.registerUser("c", "t");
    assert.deepEqual(await store.listUsers(), ["a", "b", "c"]);
  },
);

storeTest("messages keep the newest `history`, newest first", async (store) => {
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
}, { history: 7 });

storeTest(
  "the quote starts as Not set, yet ! and is replaced",
  async (store) => {
    assert.equal(await store.getQuote(), "Not set, yet !");
    await store.setQuote("New.");
    assert.equal(await store.getQuote(), "New.");
  },
);

storeTest("message ids start at 1 and are consecutive", async (store) => {
  const ids = [];
  for (let i = 0; i < 4; i++) ids.push(await store.addMessage(`{"i":${i}}`));
  assert.deepEqual(ids, [1, 2, 3, 4]);
  assert.deepEqual(
    await store.newestMessages(5),
    ['{"i":3}', '{"i":2}', '{"i":1}', '{"i":0}'],
  );
});

storeTest(
  "recentMessages answers what is retained above an id, oldest first, and how many are gone",
  async (store) => {
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

storeTest(
  "subscribe reports messages in id order and quote changes",
  async (store) => {
    const events: unknown[] = [];
    const stop = store.subscribe((event) => events.push(event));
    await store.addMessage('{"text":"a"}');
    await store.setQuote("New!");
    await store.addMessage('{"text":"b"}');
    for (let i = 0; i < 50 && events.length < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    stop();
    assert.deepEqual(events, [
      { kind: "message", id: 1, json: '{"text":"a"}' },
      { kind: "quote", quote: "New!" },
      { kind: "message", id: 2, json: '{"text":"b"}' },
    ]);
    await store.addMessage('{"text":"c"}');
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(events.length, 3, "nothing after stop");
  },
);
