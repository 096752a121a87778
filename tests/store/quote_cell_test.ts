/** The quote as every store keeps it (`QuoteCell`), run against each backend. */
import assert from "node:assert/strict";
import type { QuoteCell } from "../../src/store/store.ts";
import { storeTest } from "../_support/call.ts";

storeTest(
  "the quote starts as Not set, yet ! and is replaced",
  async (store: QuoteCell) => {
    assert.equal(await store.getQuote(), "Not set, yet !");
    await store.setQuote("New.");
    assert.equal(await store.getQuote(), "New.");
  },
);
