import assert from "node:assert/strict";
import fc from "fast-check";
import { HttpError } from "../../src/http/http_error.ts";
import type { ErrorEntry, FixedStatus } from "../../src/http/response.ts";
import { CONTENT_TYPE } from "../_support/call.ts";

const FIXED: Record<FixedStatus, string> = {
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

const entry: ErrorEntry = {
  location: "body",
  name: "text",
  description: "Missing text",
};

Deno.test("a fixed status without entries answers its {status, message} body", async () => {
  for (const [code, message] of Object.entries(FIXED)) {
    const status = Number(code) as FixedStatus;
    const res = new HttpError(status, [], { "retry-after": "2" })
      .getResponse();
    assert.equal(res.status, status);
    assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
    assert.equal(res.headers.get("retry-after"), "2");
    assert.deepEqual(await res.json(), { status, message });
  }
});

const anEntry: fc.Arbitrary<ErrorEntry> = fc.record({
  location: fc.constantFrom("url" as const, "body" as const),
  name: fc.string(),
  description: fc.string({ minLength: 1 }),
}, { noNullPrototype: true });

Deno.test("an error with entries answers the envelope, whatever its status", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 400, max: 599 }),
      anEntry,
      fc.array(anEntry, { maxLength: 3 }),
      async (status, first, rest) => {
        const entries = [first, ...rest];
        const error = new HttpError(status, [first, ...rest]);
        assert.equal(
          error.message,
          entries.map((e) => e.description).join("; "),
        );
        const res = error.getResponse();
        assert.equal(res.status, status);
        assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
        assert.deepEqual(await res.json(), {
          status: "error",
          errors: entries,
        });
      },
    ),
    { numRuns: 50 },
  );
});

Deno.test("a status with no fixed body needs entries: refused by the types and at run time", () => {
  assert.throws(() => {
    // @ts-expect-error: 429 has no fixed body, so it needs entries
    new HttpError(429);
  }, RangeError);
  assert.throws(() => {
    // @ts-expect-error: an empty list is no entries
    new HttpError(400, []);
  }, RangeError);
  // What a JavaScript caller, whom no type stops, may pass.
  for (const status of [200, 399, 600, 404.5, Number.NaN]) {
    assert.throws(
      () => new HttpError(status, [entry]),
      RangeError,
      String(status),
    );
  }
});
