/** An indexed read for tests, where a missing item fails the test. */

import assert from "node:assert/strict";

/** `items[index]`; fails the test, naming the index, when there is none. */
export function itemAt<T>(items: readonly T[], index: number): T {
  const item = items[index];
  assert.ok(item !== undefined, `no item ${index} of ${items.length}`);
  return item;
}
