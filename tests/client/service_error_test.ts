import assert from "node:assert/strict";
import { ServiceError } from "../../src/client/service_error.ts";

const entry = (description: string) => ({
  location: "body" as const,
  name: "name",
  description,
});

Deno.test("an envelope's entries are the errors, and their descriptions the message", () => {
  const error = new ServiceError(400, {
    status: "error",
    errors: [entry("Name must not be empty"), entry("second")],
  });
  assert.ok(error instanceof Error);
  assert.equal(error.name, "ServiceError");
  assert.equal(error.status, 400);
  assert.deepEqual(error.errors, [
    entry("Name must not be empty"),
    entry("second"),
  ]);
  assert.equal(error.message, "Name must not be empty; second");
  assert.equal(error.retryAfterSeconds, undefined);
});

Deno.test("a {status, message} answer has no entries and its message", () => {
  const error = new ServiceError(404, { status: 404, message: "Not Found" });
  assert.deepEqual(error.errors, []);
  assert.equal(error.message, "Not Found");
});

Deno.test("a body of another shape still makes an error that says its status", () => {
  for (
    const body of [null, undefined, "text", 3, [], { errors: "no" }, {
      message: 7,
    }]
  ) {
    const error = new ServiceError(502, body);
    assert.deepEqual(error.errors, [], JSON.stringify(body));
    assert.equal(error.message, "HTTP 502", JSON.stringify(body));
  }
});

Deno.test("Retry-After is kept only when it is a whole number of seconds", () => {
  const body = { errors: [entry("Too many writes")] };
  const cases: [string | null | undefined, number | undefined][] = [
    ["3", 3],
    ["0", 0],
    [" 12 ", 12],
    [null, undefined],
    [undefined, undefined],
    ["", undefined],
    ["1.5", undefined],
    ["-1", undefined],
    ["Wed, 21 Oct 2026 07:28:00 GMT", undefined],
    ["99999999999999999999", undefined],
  ];
  for (const [header, seconds] of cases) {
    assert.equal(
      new ServiceError(429, body, header).retryAfterSeconds,
      seconds,
      JSON.stringify(header),
    );
  }
});
