/**
 * Presence and forgetting as every store keeps them (`PresenceBoard`, the
 * contract's "Presence"), run against each backend: who is online, what
 * listeners hear, what unregistering does to it, and which idle users are
 * forgotten.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import type {
  ChangeFeed,
  PresenceBoard,
  StoreEvent,
  UserDirectory,
} from "../../src/store/store.ts";
import { storeTest } from "../_support/call.ts";

/** Polls `probe` every 10 ms for up to 5 s until it holds. */
async function until(probe: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail("still not true after 5 s");
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Listens to `store`, keeping only presence and unregistrations. */
function heard(store: ChangeFeed): { events: StoreEvent[]; stop: () => void } {
  const events: StoreEvent[] = [];
  const stop = store.subscribe((event) => {
    if (event.kind === "presence" || event.kind === "unregistered") {
      events.push(event);
    }
  });
  return { events, stop };
}

/** Whether the store says exactly `names` are online, in that order. */
const onlineIs = (store: PresenceBoard, names: string[]) => async () =>
  JSON.stringify(await store.onlineUsers()) === JSON.stringify(names);

storeTest(
  "online users are the registered ones marked online, in registration order",
  async (store: PresenceBoard & UserDirectory) => {
    for (const name of ["c", "a", "b"]) await store.registerUser(name, "t");
    assert.deepEqual(await store.onlineUsers(), []);
    store.userOnline("b");
    store.userOnline("c");
    store.userOnline("nobody");
    await until(onlineIs(store, ["c", "b"]));
    store.userOffline("c");
    await until(onlineIs(store, ["b"]));
    store.userOnline("a");
    await until(onlineIs(store, ["a", "b"]));
    assert.deepEqual(await store.listUsers(), ["c", "a", "b"]);
  },
);

storeTest(
  "listeners hear each change of presence once, and each unregistration",
  async (store: PresenceBoard & UserDirectory & ChangeFeed) => {
    await store.registerUser("ann", "t1");
    await store.registerUser("bob", "t2");
    const { events, stop } = heard(store);
    store.userOnline("ann");
    await until(() => events.length === 1);
    store.userOnline("bob");
    await until(() => events.length === 2);
    store.userOffline("ann");
    await until(() => events.length === 3);
    assert.equal(await store.removeUser("bob", "t2"), true);
    await until(() => events.length === 4);
    // Going offline after being unregistered tells nothing more.
    store.userOffline("bob");
    store.userOffline("ann");
    await sleep(100);
    stop();
    assert.deepEqual(events, [
      { kind: "presence", name: "ann", online: true },
      { kind: "presence", name: "bob", online: true },
      { kind: "presence", name: "ann", online: false },
      { kind: "unregistered", name: "bob" },
    ]);
  },
);

storeTest(
  "an unregistered user is online nowhere, and its name registered again starts offline",
  async (store: PresenceBoard & UserDirectory) => {
    await store.registerUser("ann", "old");
    store.userOnline("ann");
    await until(onlineIs(store, ["ann"]));
    assert.equal(await store.removeUser("ann", "old"), true);
    assert.deepEqual(await store.onlineUsers(), []);
    await store.registerUser("ann", "new");
    await sleep(100);
    assert.deepEqual(await store.onlineUsers(), []);
  },
);

storeTest(
  "online is what the last calls said, for any sequence of them",
  async (store: PresenceBoard & UserDirectory) => {
    const names = ["a", "b", "c"];
    for (const name of names) await store.registerUser(name, "t");
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...names), fc.boolean()), {
          maxLength: 12,
        }),
        async (calls) => {
          for (const name of names) store.userOffline(name);
          const online = new Set<string>();
          for (const [name, on] of calls) {
            if (on) store.userOnline(name), online.add(name);
            else store.userOffline(name), online.delete(name);
          }
          await until(onlineIs(store, names.filter((n) => online.has(n))));
        },
      ),
      { numRuns: 25 },
    );
  },
);

storeTest(
  "users idle past forgetUsersAfter are unregistered as removeUser would; online and active ones are kept",
  async (store: PresenceBoard & UserDirectory & ChangeFeed) => {
    for (const name of ["idle", "online", "active"]) {
      assert.equal(await store.registerUser(name, "t"), "registered");
    }
    const { events, stop } = heard(store);
    store.userOnline("online");
    const started = performance.now();
    // Active at least every 400 ms, for 1.6 s (past the 1 s idle time).
    for (let i = 0; i < 4; i++) {
      await sleep(400);
      store.touchUser("active");
    }
    await until(async () => !(await store.listUsers()).includes("idle"));
    const forgottenAfter = performance.now() - started;
    assert.ok(forgottenAfter >= 900, `forgotten after ${forgottenAfter} ms`);
    assert.equal(await store.tokenOf("idle"), undefined);
    assert.deepEqual(await store.listUsers(), ["online", "active"]);
    assert.ok(
      events.some((e) => e.kind === "unregistered" && e.name === "idle"),
    );
    // Offline from now: forgotten a second later, like any idle user,
    // while "active" goes on being active.
    store.userOffline("online");
    const offlineAt = performance.now();
    await until(async () => {
      store.touchUser("active");
      return !(await store.listUsers()).includes("online");
    });
    assert.ok(performance.now() - offlineAt >= 900);
    assert.deepEqual(await store.listUsers(), ["active"]);
    // Its name is free again.
    assert.equal(await store.registerUser("idle", "t2"), "registered");
    stop();
  },
  { forgetUsersAfter: 1 },
);
