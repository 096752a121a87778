import assert from "node:assert/strict";
import { createQuoteService } from "../../src/services/quote.ts";
import type {
  AuthFailures,
  ChangeFeed,
  QuoteCell,
  UserTokens,
} from "../../src/store/store.ts";
import { call, CONTENT_TYPE, storeTest } from "../_support/call.ts";
import { END, START } from "../_support/quote_errors.ts";

storeTest(
  "GET /quote answers the initial quote as a JSON string",
  async (store) => {
    const quote = createQuoteService({ store });
    const res = await call(quote, "GET", "/quote");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
    assert.equal(res.text, '"Not set, yet !"');
  },
);

storeTest("POST /quote replaces the quote and answers null", async (store) => {
  const quote = createQuoteService({ store });
  for (
    const text of [
      "Hello world.",
      "Why?",
      "A!",
      'Quotes "nest" ok.',
      "Unicode é fine.",
    ]
  ) {
    const res = await call(quote, "POST", "/quote", { body: text });
    assert.equal(res.status, 200, text);
    assert.equal(res.text, "null");
    assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
    assert.equal((await call(quote, "GET", "/quote")).json, text);
  }
});

const refused: [string, string, object[]][] = [
  ["lowercase start", "hello.", [START]],
  ["accented capital start", "Élan.", [START]],
  ["leading space", " Hello.", [START]],
  ["byte-order mark before the capital", "\uFEFFHello.", [START]],
  ["bad ending", "Hello", [END]],
  ["trailing space after the stop", "Hello. ", [END]],
  ["both wrong", "hello", [START, END]],
  ["empty body", "", [START, END]],
  ["digits only", "42", [START, END]],
];

for (const [label, body, errors] of refused) {
  storeTest(
    `POST /quote refuses ${label} and keeps the old quote`,
    async (store) => {
      const quote = createQuoteService({ store });
      await call(quote, "POST", "/quote", { body: "Kept." });
      const res = await call(quote, "POST", "/quote", { body });
      assert.equal(res.status, 400);
      assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
      assert.deepEqual(res.json, { status: "error", errors });
      assert.equal((await call(quote, "GET", "/quote")).json, "Kept.");
    },
  );
}

storeTest(
  "POST /quote refuses a body that is not UTF-8 with one entry",
  async (store) => {
    const quote = createQuoteService({ store });
    const res = await call(quote, "POST", "/quote", {
      body: new Uint8Array([0x48, 0xff, 0x2e]),
    });
    assert.equal(res.status, 400);
    assert.equal(res.json.errors.length, 1);
    assert.equal(res.json.errors[0].location, "body");
    assert.equal(res.json.errors[0].name, "quote");
    assert.match(res.json.errors[0].description, /UTF-8/);
    assert.equal((await call(quote, "GET", "/quote")).json, "Not set, yet !");
  },
);

storeTest(
  "POST /quote over the body limit is 413 and changes nothing",
  async (store) => {
    const quote = createQuoteService({ store, maxBodyBytes: 10 });
    const res = await call(quote, "POST", "/quote", { body: "Elevenbytes." });
    assert.equal(res.status, 413);
    assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
    assert.equal(res.json.status, "error");
    assert.equal(res.json.errors[0].name, "body");
    assert.match(res.json.errors[0].description, /\b10 bytes/);
    assert.equal((await call(quote, "GET", "/quote")).json, "Not set, yet !");
    assert.equal(
      (await call(quote, "POST", "/quote", { body: "Tenbytes.." })).status,
      200,
    );
  },
);

storeTest(
  "the quote service runs on a store with only the interfaces it names",
  async (store) => {
    // An object with nothing more, so that a call beyond them would fail.
    const part: QuoteCell & ChangeFeed & UserTokens & AuthFailures = {
      getQuote: () => store.getQuote(),
      setQuote: (text, allowance) => store.setQuote(text, allowance),
      subscribe: (listener) => store.subscribe(listener),
      subscriptionEpoch: () => store.subscriptionEpoch(),
      tokenOf: (name) => store.tokenOf(name),
      touchUser: (name) => store.touchUser(name),
      authWait: (client, rate) => store.authWait(client, rate),
      countAuthFailure: (client, rate) => store.countAuthFailure(client, rate),
    };
    const quote = createQuoteService({ store: part });
    const post = await call(quote, "POST", "/quote", { body: "Narrow." });
    assert.equal(post.status, 200);
    assert.equal((await call(quote, "GET", "/quote")).json, "Narrow.");
    assert.equal(await store.getQuote(), "Narrow.");
  },
);
