import assert from "node:assert/strict";
import fc from "fast-check";
import {
  parseCredential,
  splitCredential,
  timingSafeEqual,
} from "../../src/auth/auth.ts";
import { createAuthenticator } from "../../src/auth/guesses.ts";
import { MemoryStore } from "../../src/store/memory_store.ts";
import { tokenDigest } from "../../src/identity/token_digest.ts";
import { utf8Header } from "../_support/call.ts";

Deno.test("parseCredential splits at the first dash", () => {
  assert.deepEqual(parseCredential("alice-abc-def"), {
    name: "alice",
    token: "abc-def",
  });
  assert.deepEqual(parseCredential("-abc"), { name: "", token: "abc" });
  assert.equal(parseCredential("aliceabc"), null);
  assert.equal(parseCredential(null), null);
});

Deno.test("parseCredential decodes the name from UTF-8 header bytes", () => {
  assert.deepEqual(parseCredential(utf8Header("José-t")), {
    name: "José",
    token: "t",
  });
  assert.deepEqual(parseCredential(utf8Header("😀-t")), {
    name: "😀",
    token: "t",
  });
});

Deno.test("parseCredential reads a name that is not UTF-8 as ISO-8859-1", () => {
  // What browsers' fetch, Python's requests and Node's fetch send for José.
  assert.deepEqual(parseCredential("Jos\u00e9-t"), {
    name: "José",
    token: "t",
  });
  assert.deepEqual(parseCredential("\u00ff\u00c0\u0080-t"), {
    name: "\u00ff\u00c0\u0080",
    token: "t",
  });
  // Bytes that are valid UTF-8 are read as UTF-8, whatever the sender meant.
  assert.deepEqual(parseCredential("\u00c3\u00a9-t"), {
    name: "é",
    token: "t",
  });
});

Deno.test("timingSafeEqual compares whole strings", () => {
  assert.equal(timingSafeEqual("abc", "abc"), true);
  assert.equal(timingSafeEqual("", ""), true);
  assert.equal(timingSafeEqual("abc", "abd"), false);
  assert.equal(timingSafeEqual("abc", "ab"), false);
  assert.equal(timingSafeEqual("ab", "abc"), false);
  assert.equal(timingSafeEqual("", "a"), false);
});

Deno.test("a credential authenticates only with the token whose digest is stored for the name", async () => {
  const store = new MemoryStore();
  // As the server does, without a limit on failures.
  const { authenticate } = createAuthenticator({
    store,
    rate: undefined,
    clientOf: () => "192.0.2.1",
  });
  store.registerUser("alice", tokenDigest("a".repeat(40)));
  const req = (value: string) =>
    new Request("http://h/", { headers: { "x-messaging-token": value } });
  assert.deepEqual(await authenticate(req(`alice-${"a".repeat(40)}`)), {
    name: "alice",
    token: "a".repeat(40),
    // Kept, so that the request hashes its token once.
    digest: tokenDigest("a".repeat(40)),
  });
  assert.equal(await authenticate(req(`alice-${"b".repeat(40)}`)), null);
  assert.equal(await authenticate(req(`bob-${"a".repeat(40)}`)), null);
  assert.equal(await authenticate(new Request("http://h/")), null);
  // The digest itself is no credential.
  const digest = tokenDigest("a".repeat(40));
  assert.equal(await authenticate(req(`alice-${digest}`)), null);
});

Deno.test("a credential's name is read in NFC, from a header's UTF-8 or Latin-1 bytes and from a token frame's text alike", () => {
  fc.assert(
    fc.property(fc.string({ unit: "grapheme", maxLength: 20 }), (raw) => {
      const name = raw.replaceAll("-", "");
      const nfc = name.normalize("NFC");
      for (const form of ["NFC", "NFD"] as const) {
        const sent = `${name.normalize(form)}-t`;
        assert.equal(splitCredential(sent)?.name, nfc);
        assert.equal(parseCredential(utf8Header(sent))?.name, nfc);
      }
    }),
    { numRuns: 500 },
  );
  // Latin-1 bytes, as browsers' fetch sends a name up to U+00FF.
  assert.equal(
    parseCredential("cafe\u0301-t"),
    null,
    "no header carries U+0301",
  );
  assert.equal(parseCredential("caf\u00e9-t")?.name, "caf\u00e9");
});
