/** What operating asks of every store backend: write allowances (the rate limit), readiness, the user count. */
import assert from "node:assert/strict";
import { storeTest } from "../_support/call.ts";

const rate = { burst: 2, periodMs: 60_000 };

storeTest(
  "a client spends its burst, then waits about one period; other clients are apart",
  async (store) => {
    assert.equal(await store.spendAllowance("192.0.2.1", rate), 0);
    assert.equal(await store.spendAllowance("192.0.2.1", rate), 0);
    const wait = await store.spendAllowance("192.0.2.1", rate);
    assert.ok(wait > 59_000 && wait <= 60_000, `waits ${wait} ms`);
    const again = await store.spendAllowance("192.0.2.1", rate);
    assert.ok(
      again <= wait && again > 59_000,
      "a refused write spends nothing",
    );
    assert.equal(await store.spendAllowance("192.0.2.2", rate), 0);
  },
);

storeTest(
  "a bucket refills: after waiting what it said, the write is allowed",
  async (store) => {
    const fast = { burst: 1, periodMs: 200 };
    assert.equal(await store.spendAllowance("c", fast), 0);
    const wait = await store.spendAllowance("c", fast);
    assert.ok(wait > 0 && wait <= 200, `waits ${wait} ms`);
    await new Promise((resolve) => setTimeout(resolve, wait + 5));
    assert.equal(await store.spendAllowance("c", fast), 0);
  },
);

storeTest("a store that answers is ready", async (store) => {
  assert.equal(await store.isReady(), true);
});

storeTest(
  "userCount counts registered users without listing them",
  async (store) => {
    assert.equal(await store.userCount(), 0);
    await store.registerUser("ann", "a".repeat(40));
    await store.registerUser("bob", "b".repeat(40));
    await store.registerUser("ann", "c".repeat(40));
    assert.equal(await store.userCount(), 2);
    await store.removeUser("ann", "a".repeat(40));
    assert.equal(await store.userCount(), 1);
  },
);
