import assert from "node:assert/strict";
import { MemoryStore, Ring } from "../src/memory_store.ts";

Deno.test("Ring holds at most its capacity and wraps around", () => {
  const ring = new Ring(3);
  assert.deepEqual(ring.newest(5), []);
  for (const item of ["a", "b", "c", "d", "e"]) ring.push(item);
  assert.equal(ring.size, 3);
  assert.deepEqual(ring.newest(5), ["e", "d", "c"]);
  assert.deepEqual(ring.newest(2), ["e", "d"]);
});

Deno.test("MemoryStore refuses limits below the contract's minimums", () => {
  assert.throws(() => new MemoryStore({ history: 4 }), RangeError);
  assert.throws(() => new MemoryStore({ maxUsers: 0 }), RangeError);
  assert.throws(() => new MemoryStore({ history: 5.5 }), RangeError);
});

Deno.test("MemoryStore answers the cached GET / text until a new message arrives", () => {
  const store = new MemoryStore();
  store.addMessage('{"text":"a"}');
  const first = store.newestMessages(5);
  assert.equal(store.newestMessages(5), first);
  store.addMessage('{"text":"b"}');
  assert.equal(store.newestMessages(5), '[{"text":"b"},{"text":"a"}]');
});
