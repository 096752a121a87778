import assert from "node:assert/strict";
import fc from "fast-check";
import {
  CLOSE_CODES,
  descriptionPattern,
  entryOf,
  REFUSALS,
} from "../../src/http/catalogue.ts";

Deno.test("an entry is its refusal's location, name and text, placeholders filled in", () => {
  assert.deepEqual(entryOf(REFUSALS.userExists), {
    location: "url",
    name: "name",
    description: "This user exists!",
  });
  assert.deepEqual(entryOf(REFUSALS.bodyTooLarge, { limit: 100 }), {
    location: "body",
    name: "body",
    description: "Request body is larger than the limit of 100 bytes",
  });
});

Deno.test("each refusal's pattern matches its texts, whatever the placeholders hold, and no other refusal's", () => {
  const refusals = Object.values(REFUSALS);
  fc.assert(
    fc.property(
      fc.constantFrom(...refusals),
      fc.dictionary(
        fc.constantFrom(
          "limit",
          "seconds",
          "burst",
          "period",
          "wait",
          "reason",
          "codePoint",
        ),
        fc.string({ minLength: 1 }),
      ),
      (refusal, values) => {
        const all = {
          limit: 1,
          seconds: 1,
          burst: 1,
          period: "1 second",
          wait: "1 second",
          reason: "x",
          codePoint: "U+0001",
          ...values,
        };
        const { description } = entryOf(refusal, all);
        for (const other of refusals) {
          const matches = new RegExp(descriptionPattern(other), "u").test(
            description,
          );
          assert.equal(
            matches,
            other === refusal,
            `${description} / ${other.description}`,
          );
        }
      },
    ),
  );
});

Deno.test("docs/api.md lists every close code of the catalogue, and no other", async () => {
  const page = await Deno.readTextFile(
    new URL("../../docs/api.md", import.meta.url),
  );
  const listed = [...page.matchAll(/^\| (1\d{3}) \|/gm)].map((m) =>
    Number(m[1])
  );
  assert.deepEqual(
    listed,
    [...new Set(Object.values(CLOSE_CODES).map((c) => c.code))].sort(),
  );
});
