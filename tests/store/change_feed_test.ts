/** What every store tells its listeners (`ChangeFeed`), run against each backend. */
import assert from "node:assert/strict";
import type {
  ChangeFeed,
  MessageLog,
  QuoteCell,
} from "../../src/store/store.ts";
import { storeTest } from "../_support/call.ts";

storeTest(
  "subscribe reports messages in id order and quote changes",
  async (store: ChangeFeed & MessageLog & QuoteCell) => {
    const events: unknown[] = [];
    const stop = store.subscribe((event) => events.push(event));
    await store.addMessage('{"text":"a"}');
    await store.setQuote("New!");
    await store.addMessage('{"text":"b"}');
    for (let i = 0; i < 50 && events.length < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    stop();
    assert.deepEqual(events, [
      { kind: "message", id: 1, json: '{"text":"a"}' },
      { kind: "quote", quote: "New!" },
      { kind: "message", id: 2, json: '{"text":"b"}' },
    ]);
    await store.addMessage('{"text":"c"}');
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(events.length, 3, "nothing after stop");
  },
);
