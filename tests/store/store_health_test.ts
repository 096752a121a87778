/** Readiness as every store answers it (`StoreHealth`), run against each backend. */
import assert from "node:assert/strict";
import type { StoreHealth } from "../../src/store/store.ts";
import { storeTest } from "../_support/call.ts";

storeTest("a store that answers is ready", async (store: StoreHealth) => {
  assert.deepEqual(await store.isReady(), { ready: true });
});
