import assert from "node:assert/strict";
import { storeTest } from "../_support/call.ts";

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
  assert.equal(await store.newestMessages(5), "[]");
  for (let i = 0; i < 20; i++) await store.addMessage(JSON.stringify({ i }));
  assert.deepEqual(
    JSON.parse(await store.newestMessages(5)).map((m: { i: number }) => m.i),
    [19, 18, 17, 16, 15],
  );
  assert.deepEqual(
    JSON.parse(await store.newestMessages(100)).map((m: { i: number }) => m.i),
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
