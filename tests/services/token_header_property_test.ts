/**
 * The credential header as clients really send it, at the handler: names
 * drawn from several scripts, each sent as UTF-8 bytes (curl, the client
 * library, the web page) and, when every character is at most U+00FF, as
 * ISO-8859-1 bytes (browsers' fetch, Python's requests and Node's fetch
 * sending the name as text).
 */
import assert from "node:assert/strict";
// Test-only, pinned here as in contract_property_test.ts.
// deno-lint-ignore no-import-prefix
import fc from "npm:fast-check@4.10.2";
import { createMessagingService } from "../../src/services/messaging.ts";
import { call, storeTest, utf8Header } from "../_support/call.ts";

const SEED = 20261124;

const range = (from: number, to: number) =>
  fc.integer({ min: from, max: to }).map((c) => String.fromCodePoint(c));

/**
 * A character above ASCII of ISO-8859-1 that a name may hold: not a C1
 * control (U+0080–U+009F) nor the soft hyphen (U+00AD), which show nothing.
 */
const latin1Letter = range(0xa0, 0xff).filter((c) => c !== "\u00ad");

/** One character of a name, from one of several scripts. */
const characterArb = fc.oneof(
  range(0x41, 0x5a), // ASCII capitals
  latin1Letter, // the rest of ISO-8859-1 a name may hold
  range(0x100, 0x17f), // Latin Extended-A: Ł
  range(0x391, 0x3c9), // Greek
  range(0x410, 0x44f), // Cyrillic
  range(0x627, 0x64a), // Arabic
  range(0x4e00, 0x9fff), // CJK
  range(0x1f300, 0x1f64f), // emoji, beyond the Basic Multilingual Plane
);

/** Latin-1 text whose bytes are also valid UTF-8 (`Ã©` is `é`'s UTF-8). */
const utf8LookalikeArb = fc.tuple(
  range(0xc2, 0xdf),
  range(0xa0, 0xbf).filter((c) => c !== "\u00ad"),
).map(([lead, next]) => lead + next);

/** Names only up to U+00FF, the ones a client may send as ISO-8859-1. */
const latin1NameArb = fc.array(
  fc.oneof(range(0x41, 0x5a), latin1Letter, utf8LookalikeArb),
  { minLength: 1, maxLength: 12 },
).map((parts) => parts.join(""));

const nameArb = fc.oneof(
  fc.array(characterArb, { minLength: 1, maxLength: 12 }).map((c) =>
    c.join("")
  ),
  latin1NameArb,
  fc.constantFrom("José", "Zoë", "Иван", "李雷", "Bob🚀", "Łukasz"),
  // Names are answered in NFC; these already are.
).filter((name) => !/^\s|\s$/.test(name) && name === name.normalize("NFC"));

const codePoints = (text: string) =>
  [...text].map((c) => `U+${c.codePointAt(0)!.toString(16)}`).join(" ");

const isLatin1 = (text: string) =>
  [...text].every((c) => c.codePointAt(0)! <= 0xff);

/**
 * Whether the ISO-8859-1 bytes of `text` read as UTF-8 say something else:
 * `Ã©` is the UTF-8 of `é`.
 */
function latin1ReadsAsOtherUtf8(text: string): boolean {
  const bytes = Uint8Array.from(text, (c) => c.charCodeAt(0));
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes) !== text;
  } catch {
    return false;
  }
}

storeTest(
  "every name authenticates sent as UTF-8 bytes, and as ISO-8859-1 when it fits and is not UTF-8 (property)",
  async (store) => {
    let latin1Runs = 0;
    let lookalikes = 0;
    await fc.assert(
      fc.asyncProperty(nameArb, async (name) => {
        const svc = createMessagingService({ store });
        const reg = await call(svc, "POST", "/users", { body: name });
        assert.equal(reg.status, 200, JSON.stringify(reg.json));
        const token: string = reg.json.token;
        const asSent = (value: string) => ({
          headers: { "x-messaging-token": value },
        });
        const asUtf8 = utf8Header(token);
        const encodings = [asUtf8];
        // An ASCII name is the same bytes either way.
        if (isLatin1(name) && token !== asUtf8) encodings.push(token);

        for (const value of encodings) {
          const list = await call(svc, "GET", "/users", asSent(value));
          if (value === token && latin1ReadsAsOtherUtf8(name)) {
            // The contract reads valid UTF-8 as UTF-8: another name, refused.
            lookalikes++;
            assert.equal(list.status, 401);
            continue;
          }
          if (value === token) latin1Runs++;
          assert.equal(list.status, 200, `${codePoints(name)} as ${value}`);
          assert.ok(list.json.users.includes(name));
          const post = await call(svc, "POST", "/", {
            ...asSent(value),
            body: JSON.stringify({ text: "hi" }),
          });
          assert.equal(post.status, 200);
          const [newest] = (await call(svc, "GET", "/")).json;
          assert.equal(newest.user, name, "the message carries the name");
        }
        const bye = await call(svc, "DELETE", "/users", asSent(asUtf8));
        assert.deepEqual(bye.json, { Goodbye: name });
      }),
      { seed: SEED, numRuns: 150 },
    );
    // The generators reach both ISO-8859-1 cases.
    assert.ok(latin1Runs > 10, `${latin1Runs} names sent as ISO-8859-1`);
    assert.ok(lookalikes > 0, "no Latin-1 name whose bytes are UTF-8");
  },
);
