import assert from "node:assert/strict";
import fc from "fast-check";
import {
  errorResponse,
  isFixedStatus,
  JSON_CONTENT_TYPE,
  jsonResponse,
  ok,
  statusResponse,
} from "../../src/http/response.ts";

Deno.test("every builder answers the one JSON content type, extra headers beside it", async () => {
  const answers = [
    jsonResponse('"x"'),
    jsonResponse(null, 204, { "x-extra": "1" }),
    ok({ a: 1 }),
    errorResponse([{ location: "url", name: "n", description: "d" }]),
    statusResponse(405, { allow: "GET" }),
  ];
  for (const res of answers) {
    assert.equal(res.headers.get("content-type"), JSON_CONTENT_TYPE);
    await res.body?.cancel();
  }
  assert.equal(answers[1]?.headers.get("x-extra"), "1");
  assert.equal(answers[4]?.headers.get("allow"), "GET");
});

Deno.test("ok serializes any JSON value as the body of a 200", async () => {
  await fc.assert(
    fc.asyncProperty(fc.jsonValue(), async (value) => {
      const res = ok(value);
      assert.equal(res.status, 200);
      assert.equal(await res.text(), JSON.stringify(value));
    }),
    { numRuns: 100 },
  );
});

Deno.test("errorResponse is the contract's envelope, 400 unless told", async () => {
  const errors = [
    { location: "body" as const, name: "text", description: "Missing text" },
    { location: "url" as const, name: "name", description: "Bad name" },
  ];
  const res = errorResponse(errors);
  assert.equal(res.status, 400);
  assert.deepEqual(await res.json(), { status: "error", errors });
  assert.equal(errorResponse(errors, 429).status, 429);
});

Deno.test("statusResponse answers {status, message} for each fixed status", async () => {
  const messages = {
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    500: "Internal Server Error",
    503: "Service Unavailable",
  } as const;
  for (const status of [401, 403, 404, 405, 500, 503] as const) {
    assert.ok(isFixedStatus(status));
    const res = statusResponse(status);
    assert.equal(res.status, status);
    assert.deepEqual(await res.json(), { status, message: messages[status] });
  }
  for (const status of [200, 400, 413, 429, 502]) {
    assert.equal(isFixedStatus(status), false, String(status));
  }
});
