import assert from "node:assert/strict";
import fc from "fast-check";
import { headerValue } from "../../src/client/header_value.js";
import { MAX_NAME_LENGTH } from "../../src/http/catalogue.ts";
import { nameError, nameProblem } from "../../src/services/user_name.ts";

/** What a server reads back from a header carrying `name` as UTF-8 bytes. */
function throughHeader(name: string): string {
  const sent = new Headers({ "x-messaging-token": headerValue(name) });
  const value = sent.get("x-messaging-token") ?? "";
  const bytes = Uint8Array.from(value, (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

Deno.test("every name accepted comes back intact through the token header", () => {
  fc.assert(
    fc.property(fc.string({ unit: "grapheme", maxLength: 70 }), (name) => {
      if (nameProblem(name) !== null) return;
      assert.equal(throughHeader(`${name}-token`), `${name}-token`);
      assert.equal(`${name}-token`.split("-")[0], name);
    }),
    { numRuns: 500 },
  );
});

Deno.test("names that could not come back are refused, each with its reason", () => {
  assert.equal(nameProblem(""), "Name must not be empty");
  assert.match(nameProblem("a-b") ?? "", /must not contain '-'/);
  const controls: [string, string][] = [
    ["a\u0000b", "U+0000"],
    ["tab\there", "U+0009"],
    ["new\nline", "U+000A"],
    ["del\u007f", "U+007F"],
    ["next\u0085line", "U+0085"],
    ["c1\u009f", "U+009F"],
    ["line\u2028sep", "U+2028"],
    ["para\u2029sep", "U+2029"],
    // The most basic rule is named: the line break, not the dash.
    ["a\r\nX-Injected: 1", "U+000D"],
  ];
  for (const [name, codePoint] of controls) {
    assert.equal(
      nameProblem(name),
      `Name must not contain control characters or line breaks (${codePoint})`,
      JSON.stringify(name),
    );
  }
  for (const name of [" ann", "ann ", "\u00a0ann", "ann\u3000"]) {
    assert.equal(
      nameProblem(name),
      "Name must not start or end with white space",
      JSON.stringify(name),
    );
  }
  const invisible: [string, string][] = [
    ["right\u202eto left", "U+202E"],
    ["lr\u200emark", "U+200E"],
    ["rl\u200fmark", "U+200F"],
    ["iso\u2066late", "U+2066"],
    ["ad\u200bmin", "U+200B"],
    ["zw\u200dj", "U+200D"],
    ["word\u2060joiner", "U+2060"],
    ["\ufeffbom", "U+FEFF"],
    ["soft\u00adhyphen", "U+00AD"],
    ["a\u2800b", "U+2800"], // blank Braille pattern
    ["x\ufff9y", "U+FFF9"], // interlinear annotation
    ["x\u{13430}y", "U+13430"], // Egyptian hieroglyph format control
  ];
  for (const [name, codePoint] of invisible) {
    assert.equal(
      nameProblem(name),
      `Name must not contain invisible or direction-changing characters (${codePoint})`,
      JSON.stringify(name),
    );
  }
  for (
    const [name, codePoint] of [["x\uffff", "U+FFFF"], ["x\ufffe", "U+FFFE"], [
      "x\ufdd0",
      "U+FDD0",
    ], ["x\u{10ffff}", "U+10FFFF"]]
  ) {
    assert.equal(
      nameProblem(name!),
      `Name must not contain noncharacters (${codePoint})`,
    );
  }
  for (
    const [name, codePoint] of [["\u0301", "U+0301"], ["\u20ddab", "U+20DD"]]
  ) {
    assert.equal(
      nameProblem(name!),
      `Name must not start with a combining mark (${codePoint})`,
    );
  }
  assert.equal(nameProblem("Ann Lee"), null);
  assert.equal(nameProblem("Иван"), null);
});

Deno.test("the length is counted in code points: 64 emoji pass, 65 letters do not", () => {
  assert.equal(MAX_NAME_LENGTH, 64);
  assert.equal(nameProblem("🚀".repeat(64)), null);
  assert.equal(nameProblem("a".repeat(64)), null);
  assert.equal(
    nameProblem("a".repeat(65)),
    "Name must be at most 64 characters",
  );
  assert.equal(
    nameProblem("🚀".repeat(65)),
    "Name must be at most 64 characters",
  );
});

Deno.test("nameError is an entry about the body's name", () => {
  assert.deepEqual(nameError("This user exists!"), {
    location: "body",
    name: "name",
    description: "This user exists!",
  });
});
