import assert from "node:assert/strict";
import fc from "fast-check";
import { MAX_JSON_DEPTH, parsePosted } from "../../src/services/posted_json.ts";

// JSON's number grammar, spelt every way it allows: signs, leading "0.",
// trailing zeros, exponents of any size, many digits.
const digits = (min: number, max: number) =>
  fc.string({
    unit: fc.constantFrom(..."0123456789"),
    minLength: min,
    maxLength: max,
  });
const numberText = fc.tuple(
  fc.constantFrom("", "-"),
  fc.oneof(
    fc.constant("0"),
    fc.tuple(fc.constantFrom(..."123456789"), digits(0, 40)).map(([a, b]) =>
      a + b
    ),
  ),
  fc.option(digits(1, 30).map((d) => "." + d), { nil: "" }),
  fc.option(
    fc.tuple(
      fc.constantFrom("e", "E"),
      fc.constantFrom("", "+", "-"),
      digits(1, 4),
    ).map((p) => p.join("")),
    { nil: "" },
  ),
).map((parts) => parts.join(""));

// Compact JSON text whose strings are spelt as JSON.stringify spells them,
// so the only thing a round trip could change is a number.
const { value: jsonText } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    numberText,
    fc.string().map((s) => JSON.stringify(s)),
    fc.constantFrom("true", "false", "null"),
    fc.array(tie("value")).map((items) => `[${items.join(",")}]`),
    // Keys that are array indexes ("0", "17") are listed first by every
    // JavaScript object, whatever their posted order: left out here.
    fc.uniqueArray(
      fc.tuple(
        fc.string().filter((k) => !/^(0|[1-9]\d*)$/.test(k)),
        tie("value"),
      ),
      {
        selector: ([key]) => key,
      },
    ).map((members) =>
      `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`
    ),
  ),
}));

Deno.test("every number in a posted body comes back with its digits, whatever else it holds", () => {
  fc.assert(
    fc.property(jsonText, (text) => {
      const posted = parsePosted(text);
      assert.ok(posted.ok, text);
      assert.equal(JSON.stringify(posted.value), text);
    }),
    { numRuns: 2000 },
  );
});

Deno.test("the numbers the outside trial saw changed are kept as posted", () => {
  for (
    const n of [
      "1e400",
      "123456789012345678901234567890",
      "1.50",
      "-0",
      "-1E-400",
    ]
  ) {
    const posted = parsePosted(`{"text":"x","n":${n}}`);
    assert.ok(posted.ok);
    assert.equal(JSON.stringify(posted.value), `{"text":"x","n":${n}}`);
  }
});

Deno.test("nesting up to the bound is accepted, one level more is refused, in arrays, objects and strings alike", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 3 * MAX_JSON_DEPTH }),
      fc.boolean(),
      fc.string(),
      (depth, objects, filler) => {
        const open = objects ? '{"a":' : "[";
        const close = objects ? "}" : "]";
        // `depth` levels in all, the posted object's own included; brackets
        // inside strings do not nest.
        const text = open.repeat(depth - 1) + JSON.stringify(filler + "[[{{") +
          close.repeat(depth - 1);
        const posted = parsePosted(`{"text":${text}}`);
        if (depth > MAX_JSON_DEPTH) {
          assert.deepEqual(posted, { ok: false, refusal: "too deep" });
        } else assert.ok(posted.ok);
      },
    ),
  );
});

Deno.test("a body that is not JSON is refused as such before its depth is judged", () => {
  assert.deepEqual(parsePosted("[".repeat(1000)), {
    ok: false,
    refusal: "invalid",
  });
  assert.deepEqual(parsePosted('{"text":"x",}'), {
    ok: false,
    refusal: "invalid",
  });
  assert.deepEqual(parsePosted('"\\'), { ok: false, refusal: "invalid" });
});

Deno.test("a 20,000-deep body is refused without a stack overflow", () => {
  const deep = "[".repeat(20_000) + "]".repeat(20_000);
  assert.deepEqual(parsePosted(deep), { ok: false, refusal: "too deep" });
});

Deno.test("a lone surrogate, escaped anywhere in a string or key, is not valid JSON text (I-JSON); pairs and any other escape are", () => {
  const hex = (code: number) => `\\u${code.toString(16).padStart(4, "0")}`;
  const high = fc.integer({ min: 0xd800, max: 0xdbff });
  const low = fc.integer({ min: 0xdc00, max: 0xdfff });
  const other = fc.oneof(
    fc.integer({ min: 0, max: 0xd7ff }),
    fc.integer({ min: 0xe000, max: 0xffff }),
  );
  const lone = fc.oneof(
    high.map(hex),
    low.map(hex),
    fc.tuple(high, other).map(([h, o]) => hex(h) + hex(o)),
    fc.tuple(high, high).map(([h, o]) => hex(h) + hex(o)),
    fc.tuple(low, high).map(([l, h]) => hex(l) + hex(h)),
    high.map((h) => hex(h) + "x"),
  );
  const fine = fc.oneof(
    fc.tuple(high, low).map(([h, l]) => hex(h) + hex(l)),
    other.map(hex),
    fc.constantFrom("\\\\u", "\\\\ud800", "\\n", '\\"', "🚀"),
  );
  const place = (inner: string, asKey: boolean) =>
    asKey ? `{"text":"x","a${inner}b":1}` : `{"text":"a${inner}b"}`;
  fc.assert(
    fc.property(lone, fine, fc.boolean(), (bad, good, asKey) => {
      assert.deepEqual(
        parsePosted(place(good + bad, asKey)),
        { ok: false, refusal: "invalid" },
        place(good + bad, asKey),
      );
      const kept = parsePosted(place(good, asKey));
      assert.ok(kept.ok, place(good, asKey));
    }),
    { numRuns: 1000 },
  );
});
