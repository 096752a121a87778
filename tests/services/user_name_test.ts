import assert from "node:assert/strict";
import fc from "fast-check";
import { headerValue } from "../../src/client/header_value.js";
import {
  MAX_NAME_LENGTH,
  nameError,
  nameProblem,
} from "../../src/services/user_name.ts";

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
  for (const name of ["a\u0000b", "tab\there", "new\nline", "del\u007f"]) {
    assert.equal(
      nameProblem(name),
      "Name must not contain control characters",
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
