import assert from "node:assert/strict";
import fc from "fast-check";
import { confusablePairs, skeleton } from "../../src/identity/name_skeleton.ts";

Deno.test("every confusable in Unicode's data has the skeleton of what it looks like, inside any name", () => {
  // UTS #39 maps the NFD of a name, so an entry whose character or prototype
  // NFD rewrites (Ö, ǅ, Hangul: 1,097 of 6,294) is reached through its parts
  // instead, and those parts may map on (Ö's O and ̈ do not make ⍥).
  const rewritten = (s: string) => s.normalize("NFD") !== s;
  let pairs = 0;
  for (const [confusable, prototype] of confusablePairs()) {
    if (rewritten(confusable) || rewritten(prototype)) continue;
    assert.equal(
      skeleton(`x${confusable}y`),
      skeleton(`x${prototype}y`),
      `U+${confusable.codePointAt(0)!.toString(16)}`,
    );
    pairs++;
  }
  assert.equal(pairs, 5197);
});

Deno.test("a name composed (NFC) or decomposed (NFD) has one skeleton", () => {
  fc.assert(
    fc.property(fc.string({ unit: "grapheme" }), (name) => {
      assert.equal(
        skeleton(name.normalize("NFC")),
        skeleton(name.normalize("NFD")),
      );
    }),
    { numRuns: 2000 },
  );
});

Deno.test("look-alike names in several scripts share a skeleton; different names do not", () => {
  const alike: [string, string][] = [
    ["admin", "\u0430dmin"], // Cyrillic а
    ["paypal", "p\u0430yp\u0430l"],
    ["alice", "a\u0399ice"], // Greek capital iota for l
    ["bob", "\u0184ob"], // Latin capital letter six
    ["ΑΒΓ", "ABΓ"], // Greek capitals and Latin ones
    ["José", "Jose\u0301"],
    ["ok", "\u03bfk"], // Greek omicron
    ["rn", "m"],
  ];
  for (const [a, b] of alike) {
    assert.equal(skeleton(a), skeleton(b), `${a} ~ ${b}`);
  }
  const apart: [string, string][] = [
    ["alice", "bob"],
    ["Иван", "Ivan"],
    ["李雷", "李电"],
    ["admin", "admins"],
  ];
  for (const [a, b] of apart) {
    assert.notEqual(skeleton(a), skeleton(b), `${a} / ${b}`);
  }
});
