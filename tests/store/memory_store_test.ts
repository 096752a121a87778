import assert from "node:assert/strict";
import { MemoryStore } from "../../src/store/memory_store.ts";

Deno.test("MemoryStore refuses limits below the contract's minimums", () => {
  assert.throws(() => new MemoryStore({ history: 4 }), RangeError);
  assert.throws(() => new MemoryStore({ maxUsers: 0 }), RangeError);
  assert.throws(() => new MemoryStore({ history: 5.5 }), RangeError);
});

Deno.test("MemoryStore answers the same newest-messages array until a new message arrives", () => {
  const store = new MemoryStore();
  store.addMessage('{"text":"a"}');
  const first = store.newestMessages(5);
  assert.equal(store.newestMessages(5), first);
  store.addMessage('{"text":"b"}');
  assert.notEqual(store.newestMessages(5), first);
  assert.deepEqual(store.newestMessages(5), ['{"text":"b"}', '{"text":"a"}']);
});
