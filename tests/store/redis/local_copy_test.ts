/**
 * The local copies of shared values and the kept tokens: served only while
 * they are known to be current (the subscription live, no change heard, no
 * reconnection since they were read), so a process never serves a value it
 * might not hear about.
 */

import assert from "node:assert/strict";
import { KeptTokens, LocalCopy } from "../../../src/store/redis/local_copy.ts";

/** A subscription the test turns on and off, and reconnects. */
function subscription() {
  let epoch = 0;
  return {
    up: true,
    subscriptionEpoch(): number | undefined {
      return this.up ? epoch : undefined;
    },
    reconnect() {
      epoch++;
    },
  };
}

/** A load that counts its calls and answers `value()` when the test says (at once by default). */
function loader<T>(value: () => T) {
  let calls = 0;
  let gate: Promise<void> = Promise.resolve();
  let open = () => {};
  return {
    load: async () => {
      calls++;
      await gate;
      return value();
    },
    calls: () => calls,
    hold() {
      gate = new Promise((resolve) => open = resolve);
    },
    release: () => open(),
  };
}

Deno.test("a copy is loaded once and served while nothing changes, shared by reads that miss together", async () => {
  const copy = new LocalCopy<string>(subscription());
  const source = loader(() => "v1");
  source.hold();
  const [a, b] = [copy.read(source.load), copy.read(source.load)];
  source.release();
  assert.deepEqual([await a, await b], ["v1", "v1"]);
  assert.equal(copy.read(source.load), "v1", "served without a load");
  assert.equal(source.calls(), 1);
});

Deno.test("a change drops the copy, and a load that overlapped a change is not kept", async () => {
  const copy = new LocalCopy<string>(subscription());
  let value = "v1";
  const source = loader(() => value);
  await copy.read(source.load);
  copy.changed();
  value = "v2";
  source.hold();
  const overlapping = copy.read(source.load);
  copy.changed();
  value = "v3";
  source.release();
  assert.equal(await overlapping, "v3");
  // Read before the last change was heard of, it may be stale: loaded again.
  assert.equal(await copy.read(source.load), "v3");
  assert.equal(source.calls(), 3);
  assert.equal(copy.read(source.load), "v3");
});

Deno.test("while the subscription is down nothing is kept, and a reconnection drops what was", async () => {
  const live = subscription();
  const copy = new LocalCopy<string>(live);
  const source = loader(() => "v");
  await copy.read(source.load);
  live.up = false;
  assert.ok(copy.read(source.load) instanceof Promise);
  assert.ok(copy.read(source.load) instanceof Promise);
  await copy.read(source.load);
  live.up = true;
  live.reconnect();
  assert.ok(copy.read(source.load) instanceof Promise, "an older epoch's copy");
  await copy.read(source.load);
  const calls = source.calls();
  assert.equal(copy.read(source.load), "v");
  assert.equal(source.calls(), calls);
  // A load that spans a reconnection is not kept either.
  copy.changed();
  source.hold();
  const spanning = copy.read(source.load);
  live.reconnect();
  source.release();
  await spanning;
  assert.ok(copy.read(source.load) instanceof Promise);
});

Deno.test("a failed load is not kept: the next read loads again", async () => {
  const copy = new LocalCopy<string>(subscription());
  let fail = true;
  const load = () =>
    fail ? Promise.reject(new Error("down")) : Promise.resolve("v");
  await assert.rejects(Promise.resolve(copy.read(load)), /down/);
  fail = false;
  assert.equal(await copy.read(load), "v");
  assert.equal(copy.read(load), "v");
});

Deno.test("kept tokens: a found token is kept until its user is forgotten; a missing one is never kept", async () => {
  const tokens = new KeptTokens(subscription());
  const stored = new Map([["ann", "t1"]]);
  let loads = 0;
  const load = (name: string) => () => {
    loads++;
    return Promise.resolve(stored.get(name) ?? null);
  };
  assert.equal(await tokens.tokenOf("ann", load("ann")), "t1");
  assert.equal(tokens.tokenOf("ann", load("ann")), "t1");
  assert.equal(await tokens.tokenOf("bob", load("bob")), undefined);
  stored.set("bob", "t2");
  assert.equal(await tokens.tokenOf("bob", load("bob")), "t2");
  assert.equal(loads, 3);
  tokens.forget("ann");
  stored.set("ann", "t3");
  assert.equal(await tokens.tokenOf("ann", load("ann")), "t3");
});

Deno.test("kept tokens: a lookup that overlapped a removal, a reconnection or a lost subscription is not kept", async () => {
  const live = subscription();
  const tokens = new KeptTokens(live);
  let release = () => {};
  const slow = () =>
    new Promise<string>((resolve) => release = () => resolve("old"));
  for (
    const meanwhile of [
      () => tokens.forget("ann"),
      () => live.reconnect(),
      () => live.up = false,
    ]
  ) {
    const lookup = tokens.tokenOf("ann", slow);
    meanwhile();
    release();
    assert.equal(await lookup, "old");
    live.up = true;
    const again = tokens.tokenOf("ann", () => Promise.resolve("new"));
    assert.ok(again instanceof Promise, "not served from what was kept");
    assert.equal(await again, "new");
    tokens.forget("ann");
  }
  // A reconnection drops every kept token.
  await tokens.tokenOf("ann", () => Promise.resolve("t"));
  assert.equal(tokens.tokenOf("ann", slow), "t");
  live.reconnect();
  assert.ok(
    tokens.tokenOf("ann", () => Promise.resolve("t")) instanceof Promise,
  );
});
