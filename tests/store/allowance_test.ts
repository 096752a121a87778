/** Write allowances (the rate limit) as every store backend spends them, across its interfaces. */
import assert from "node:assert/strict";
import { storeTest } from "../_support/call.ts";
import { RateLimited } from "../../src/store/store.ts";

const rate = { burst: 2, periodMs: 60_000 };

/** The wait a refused write names, or 0 when it was allowed. */
async function spend(write: () => unknown): Promise<number> {
  try {
    await write();
    return 0;
  } catch (error) {
    assert.ok(error instanceof RateLimited, String(error));
    return error.waitMs;
  }
}

storeTest(
  "a write spends its client's allowance in the same step: a burst, then a wait of about one period, and nothing written",
  async (store) => {
    const client = { client: "192.0.2.1", rate };
    assert.equal(await spend(() => store.setQuote("One.", client)), 0);
    assert.equal(await spend(() => store.setQuote("Two.", client)), 0);
    const wait = await spend(() => store.setQuote("Three.", client));
    assert.ok(wait > 59_000 && wait <= 60_000, `waits ${wait} ms`);
    assert.equal(
      await store.getQuote(),
      "Two.",
      "a refused write writes nothing",
    );
    // Every write spends the same allowance, and is refused the same way.
    const refused = [
      () => store.registerUser("ann", "a".repeat(40), client),
      () => store.removeUser("ann", "a".repeat(40), client),
      () => store.addMessage('{"text":"hi"}', client),
    ];
    for (const write of refused) assert.ok(await spend(write) > 59_000);
    assert.equal(await store.userCount(), 0);
    assert.deepEqual(await store.newestMessages(5), []);
    // Other clients have their own allowance; writes without one are free.
    assert.equal(
      await spend(() => store.setQuote("Four.", { client: "192.0.2.2", rate })),
      0,
    );
    assert.equal(await spend(() => store.setQuote("Five.")), 0);
    assert.equal(await store.getQuote(), "Five.");
  },
);

storeTest(
  "a bucket refills: after waiting what it said, the write is allowed",
  async (store) => {
    const fast = { client: "c", rate: { burst: 1, periodMs: 200 } };
    assert.equal(await spend(() => store.setQuote("A.", fast)), 0);
    const wait = await spend(() => store.setQuote("B.", fast));
    assert.ok(wait > 0 && wait <= 200, `waits ${wait} ms`);
    await new Promise((resolve) => setTimeout(resolve, wait + 5));
    assert.equal(await spend(() => store.setQuote("C.", fast)), 0);
  },
);

storeTest(
  "a registration refused because the name (or its look) is taken spends the allowance too, so probing which names exist is limited as writes are",
  async (store) => {
    const client = { client: "192.0.2.3", rate };
    assert.equal(
      await store.registerUser("dave", "d".repeat(40)),
      "registered",
    );
    assert.equal(
      await store.registerUser("dave", "e".repeat(40), client),
      "exists",
    );
    assert.equal(
      await store.registerUser("dаve", "f".repeat(40), client), // Cyrillic а
      "exists",
    );
    assert.ok(
      await spend(() => store.registerUser("erin", "a".repeat(40), client)) >
        59_000,
    );
    assert.equal(await store.userCount(), 1);
  },
);
