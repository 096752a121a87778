import assert from "node:assert/strict";
import fc from "fast-check";
import { quoteErrors } from "../../src/services/quote_check.ts";
import { END, START } from "../_support/quote_errors.ts";

Deno.test("a quote passes exactly when it starts with A-Z and ends in . ? or !", () => {
  fc.assert(
    fc.property(fc.string({ unit: "grapheme", maxLength: 12 }), (text) => {
      const starts = /^[A-Z]/.test(text);
      const ends = /[.?!]$/.test(text);
      const expected = [...(starts ? [] : [START]), ...(ends ? [] : [END])];
      assert.deepEqual(quoteErrors(text), expected);
    }),
    { numRuns: 500 },
  );
});

Deno.test("edge cases: one character, other capitals, other stops", () => {
  assert.deepEqual(quoteErrors(""), [START, END]);
  assert.deepEqual(quoteErrors("."), [START]);
  assert.deepEqual(quoteErrors("A"), [END]);
  assert.deepEqual(quoteErrors("A."), []);
  assert.deepEqual(quoteErrors("@home."), [START]);
  assert.deepEqual(quoteErrors("[Aside]."), [START]);
  assert.deepEqual(quoteErrors("Zed."), []);
  assert.deepEqual(quoteErrors("Étoile."), [START]);
  assert.deepEqual(quoteErrors("\uFEFFHello."), [START]);
  assert.deepEqual(quoteErrors("Hello…"), [END]);
  assert.deepEqual(quoteErrors("Hello.\n"), [END]);
});
