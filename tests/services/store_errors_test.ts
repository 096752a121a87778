import assert from "node:assert/strict";
import { mapStoreError } from "../../src/services/store_errors.ts";
import { RateLimited, StoreUnavailableError } from "../../src/store/store.ts";

Deno.test("a store that cannot be reached is 503 with Retry-After, saying nothing of why", async () => {
  const res = mapStoreError(
    new StoreUnavailableError("redis at 10.0.0.5:6379 refused", {
      cause: new Error("ECONNREFUSED"),
    }),
  );
  assert.equal(res?.status, 503);
  // A client learns when to come back, as from every other 503 of a store.
  assert.equal(res?.headers.get("retry-after"), "1");
  const text = await res?.text() ?? "";
  assert.deepEqual(JSON.parse(text), {
    status: 503,
    message: "Service Unavailable",
  });
  assert.doesNotMatch(text, /redis|10\.0\.0\.5|ECONNREFUSED/);
});

Deno.test("a client out of allowance is 429 with a Retry-After in whole seconds, at least one", async () => {
  const rate = { burst: 5, periodMs: 10_000 };
  for (
    const [waitMs, seconds] of [[1, "1"], [1000, "1"], [1001, "2"], [
      9500,
      "10",
    ]] as const
  ) {
    const res = mapStoreError(new RateLimited(waitMs, rate));
    assert.equal(res?.status, 429);
    assert.equal(res?.headers.get("retry-after"), seconds, String(waitMs));
    const body = await res?.json();
    assert.equal(body.status, "error");
    assert.equal(body.errors[0].name, "rate");
  }
});

Deno.test("anything else is not the store's to answer: it stays a fault", () => {
  for (
    const error of [new Error("bug"), new TypeError("x"), "text", undefined]
  ) {
    assert.equal(mapStoreError(error), undefined);
  }
});
