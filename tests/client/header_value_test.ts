import assert from "node:assert/strict";
import fc from "fast-check";
import { headerValue } from "../../src/client/header_value.js";

/** The bytes a header value stands for, one per character, as the wire carries them. */
const bytesOf = (value: string) =>
  Uint8Array.from(value, (c) => c.charCodeAt(0));

Deno.test("any text travels as its UTF-8 bytes, in a value fetch accepts", () => {
  fc.assert(
    fc.property(fc.string({ unit: "grapheme" }), (text) => {
      const value = headerValue(text);
      assert.deepEqual(bytesOf(value), new TextEncoder().encode(text));
      // Headers refuses a character above U+00FF; this never has one.
      const headers = new Headers({ "x-messaging-token": `x${value}x` });
      const sent = headers.get("x-messaging-token") ?? "";
      assert.equal(
        new TextDecoder().decode(bytesOf(sent.slice(1, -1))),
        text,
      );
    }),
    { numRuns: 300 },
  );
});

Deno.test("ASCII is sent as it is; other text is not, which fetch would refuse or misread", () => {
  assert.equal(headerValue("ann-0123abcd"), "ann-0123abcd");
  assert.equal(headerValue("José"), "Jos\u00c3\u00a9");
  assert.throws(() => new Headers({ "x-name": "Иван" }), TypeError);
  new Headers({ "x-name": headerValue("Иван") });
});
