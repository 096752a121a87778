/** The users as every store keeps them (`UserDirectory`), run against each backend. */
import assert from "node:assert/strict";
import type { UserDirectory } from "../../src/store/store.ts";
import { storeTest } from "../_support/call.ts";

storeTest(
  "registerUser is register-if-absent",
  async (store: UserDirectory) => {
    assert.equal(await store.registerUser("alice", "t1"), "registered");
    assert.equal(await store.registerUser("alice", "t2"), "exists");
    assert.equal(await store.tokenOf("alice"), "t1");
    assert.equal(await store.tokenOf("bob"), undefined);
  },
);

storeTest(
  "registerUser stops at maxUsers and frees a place on removal",
  async (store: UserDirectory) => {
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
  async (store: UserDirectory) => {
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
  async (store: UserDirectory) => {
    for (const name of ["c", "a", "b"]) await store.registerUser(name, "t");
    await store.removeUser("c", "t");
    await store.registerUser("c", "t");
    assert.deepEqual(await store.listUsers(), ["a", "b", "c"]);
  },
);

storeTest(
  "userCount counts registered users without listing them",
  async (store: UserDirectory) => {
    assert.equal(await store.userCount(), 0);
    await store.registerUser("ann", "a".repeat(40));
    await store.registerUser("bob", "b".repeat(40));
    await store.registerUser("ann", "c".repeat(40));
    assert.equal(await store.userCount(), 2);
    await store.removeUser("ann", "a".repeat(40));
    assert.equal(await store.userCount(), 1);
  },
);
