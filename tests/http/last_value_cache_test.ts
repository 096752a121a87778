import assert from "node:assert/strict";
import { lastValueCache } from "../../src/http/last_value_cache.ts";

Deno.test("lastValueCache computes again only when the argument changes", () => {
  let calls = 0;
  const cached = lastValueCache((s: string) => (calls++, s.length));
  assert.equal(cached("abc"), 3);
  assert.equal(cached("abc"), 3);
  assert.equal(calls, 1);
  assert.equal(cached("abcd"), 4);
  assert.equal(calls, 2);
});
