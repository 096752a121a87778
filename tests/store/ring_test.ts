import assert from "node:assert/strict";
import { Ring } from "../../src/store/ring.ts";

Deno.test("Ring holds at most its capacity and wraps around", () => {
  const ring = new Ring(3);
  assert.deepEqual(ring.newestAfter(0, 5), []);
  for (const item of ["a", "b", "c", "d", "e"]) ring.push(item);
  assert.equal(ring.size, 3);
  assert.deepEqual(ring.newestAfter(0, 5), ["e", "d", "c"]);
  assert.deepEqual(ring.newestAfter(0, 2), ["e", "d"]);
});
