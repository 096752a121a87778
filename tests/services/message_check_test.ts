import assert from "node:assert/strict";
import fc from "fast-check";
import { checkMessage } from "../../src/services/message_check.ts";

const refused = (body: string | null) => {
  const check = checkMessage(body, "ann");
  assert.equal(check.ok, false, `accepted ${body}`);
  return check.ok ? [] : check.errors;
};

const entry = (name: string, description: string) => ({
  location: "body",
  name,
  description,
});

Deno.test("the checks run in the contract's order, each answering one entry", () => {
  for (const body of [null, "", "{", "{'text':1}", "text"]) {
    assert.deepEqual(refused(body), [entry("message", "Not valid JSON")]);
  }
  for (
    const body of [
      "[]",
      '["text"]',
      "null",
      '"text"',
      "3",
      "{}",
      '{"Text":"x"}',
    ]
  ) {
    assert.deepEqual(refused(body), [entry("text", "Missing text")], body);
  }
  for (const body of ['{"text":null}', '{"text":3}', '{"text":["x"]}']) {
    assert.deepEqual(refused(body), [entry("text", "text must be a string")]);
  }
  // text is checked before color: a message wrong in both hears of text.
  assert.deepEqual(refused('{"text":1,"color":"blue"}'), [
    entry("text", "text must be a string"),
  ]);
  for (const color of ['"blue"', '"Red"', "null", "1", '["red"]']) {
    assert.deepEqual(refused(`{"text":"x","color":${color}}`), [
      entry("color", "only red and black supported"),
    ]);
  }
});

Deno.test("a passing message is stored as posted, with black by default and the poster as user", () => {
  fc.assert(
    fc.property(
      fc.dictionary(fc.string(), fc.jsonValue()),
      fc.string(),
      fc.option(fc.constantFrom("red", "black"), { nil: undefined }),
      fc.string(),
      (fields, text, color, user) => {
        const posted: Record<string, unknown> = { ...fields, text };
        if (color === undefined) delete posted.color;
        else posted.color = color;
        const check = checkMessage(JSON.stringify(posted), user);
        assert.ok(check.ok);
        assert.deepEqual(check.message, {
          ...JSON.parse(JSON.stringify(posted)),
          color: color ?? "black",
          user,
        });
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("the poster's name replaces any user the body claims, and __proto__ stays a field", () => {
  const check = checkMessage(
    '{"text":"hi","user":"admin","__proto__":{"polluted":true}}',
    "ann",
  );
  assert.ok(check.ok);
  assert.equal(check.message.user, "ann");
  assert.ok(Object.hasOwn(check.message, "__proto__"));
  assert.deepEqual(
    JSON.parse(JSON.stringify(check.message)),
    JSON.parse(
      '{"text":"hi","user":"ann","__proto__":{"polluted":true},"color":"black"}',
    ),
  );
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});
