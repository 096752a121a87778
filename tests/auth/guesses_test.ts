/**
 * Guessing is limited, at handler level: a client's failed
 * authentications are counted on every authenticated route, past the
 * allowance every authenticated request of that client is 429 (a right
 * credential too), other clients are untouched, and the limit refills.
 */
import assert from "node:assert/strict";
import { createHandler } from "../../src/program/app.ts";
import { MemoryStore } from "../../src/store/memory_store.ts";
import type { RateLimit } from "../../src/store/token_buckets.ts";
import { type Answer, call, CONTENT_TYPE } from "../_support/call.ts";

const attacker = { client: "192.0.2.66" };
const other = { client: "192.0.2.7" };

function guarded(authFailures?: RateLimit | false) {
  const store = new MemoryStore();
  const handler = createHandler({ store, authFailures });
  const register = async (name: string) =>
    (await call(handler, "POST", "/users", { ...other, body: name })).json
      .token as string;
  return { store, handler, register };
}

/** Every authenticated call, as one client with one credential makes it. */
const AUTHENTICATED = [
  ["GET", "/users", undefined],
  ["GET", "/users/online", undefined],
  ["POST", "/", '{"text":"guess"}'],
  // An authenticated stream's status, as GET would answer it.
  ["HEAD", "/events", undefined],
  ["DELETE", "/users", undefined],
] as const;

function assertRefused(res: Answer, burst: number, period: string): void {
  assert.equal(res.status, 429);
  assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
  assert.match(res.headers.get("retry-after") ?? "", /^[1-9]\d*$/);
  assert.deepEqual(res.json.errors.map((e: { name: string }) => e.name), [
    "rate",
  ]);
  assert.equal(res.json.errors[0].location, "url");
  assert.match(
    res.json.errors[0].description,
    new RegExp(
      `^Too many failed authentications from this client: ${burst} at once, then one every ${period}; try again in \\d+ seconds?$`,
    ),
  );
}

Deno.test("past its burst of wrong tokens a client is 429 on every authenticated route, its right token too; others are not", async () => {
  const { handler, register, store } = guarded({ burst: 3, periodMs: 60_000 });
  const token = await register("ann");
  const wrong = token.slice(0, -1) + (token.endsWith("0") ? "1" : "0");
  for (const [method, path, body] of AUTHENTICATED.slice(0, 3)) {
    const res = await call(handler, method, path, {
      ...attacker,
      token: wrong,
      body,
    });
    assert.equal(res.status, 401, `${method} ${path} counts as a failure`);
  }
  for (const [method, path, body] of AUTHENTICATED) {
    assertRefused(
      await call(handler, method, path, { ...attacker, token: wrong, body }),
      3,
      "60 seconds",
    );
    // A right guess now tells the guesser nothing.
    assertRefused(
      await call(handler, method, path, { ...attacker, token, body }),
      3,
      "60 seconds",
    );
  }
  assert.equal(await store.userCount(), 1, "ann was not removed");
  assert.deepEqual(store.newestMessages(5), [], "nothing was posted");
  // Another client authenticates as before, with the same credential.
  for (const [method, path, body] of AUTHENTICATED) {
    const res = await call(handler, method, path, { ...other, token, body });
    assert.equal(res.status, 200, `${method} ${path} from another client`);
  }
});

Deno.test("requests without a credential, right credentials and reads are never counted", async () => {
  const { handler, register } = guarded({ burst: 2, periodMs: 60_000 });
  const token = await register("ann");
  for (let i = 0; i < 50; i++) {
    assert.equal((await call(handler, "GET", "/users", attacker)).status, 401);
    assert.equal(
      (await call(handler, "GET", "/users", { ...attacker, token })).status,
      200,
    );
    assert.equal((await call(handler, "GET", "/", attacker)).status, 200);
  }
  // The whole allowance is still there: two failures, then the refusal.
  for (const expected of [401, 401, 429]) {
    const res = await call(handler, "GET", "/users", {
      ...attacker,
      token: "ann-00",
    });
    assert.equal(res.status, expected);
  }
});

Deno.test("a waiting client gets one more try each period, and Retry-After says when", async () => {
  const { handler } = guarded({ burst: 1, periodMs: 1000 });
  const guess = () =>
    call(handler, "GET", "/users", { ...attacker, token: "nobody-00" });
  assert.equal((await guess()).status, 401);
  const refused = await guess();
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get("retry-after"), "1");
  await new Promise((resolve) => setTimeout(resolve, 1050));
  assert.equal((await guess()).status, 401, "one more try after the period");
  assert.equal((await guess()).status, 429);
});

Deno.test("the default allows 100 failures at once; false turns the limit off", async () => {
  const on = guarded();
  const off = guarded(false);
  const guess = (handler: typeof on.handler) =>
    call(handler, "GET", "/users", { ...attacker, token: "nobody-00" });
  // One more try comes back each 0.1 s, so a slow run earns a few more.
  const start = performance.now();
  let failures = 0;
  let next = await guess(on.handler);
  for (; next.status === 401 && failures < 400; failures++) {
    next = await guess(on.handler);
  }
  const refilled = Math.ceil((performance.now() - start) / 100);
  assertRefused(next, 100, "0.1 seconds");
  assert.ok(
    failures >= 100 && failures <= 100 + refilled,
    `429 after ${failures} failures in ${refilled / 10} s`,
  );
  for (let i = 0; i < 1000; i++) {
    assert.equal((await guess(off.handler)).status, 401);
  }
});

Deno.test("a body of a refused request is not read, and /metrics counts failures and refusals", async () => {
  const { handler } = guarded({ burst: 1, periodMs: 60_000 });
  await call(handler, "GET", "/users", { ...attacker, token: "a-0" });
  let pulled = 0;
  const body = () =>
    new ReadableStream({
      pull(controller) {
        pulled++;
        controller.enqueue(new TextEncoder().encode('{"text":"x"}'));
        controller.close();
      },
    }, { highWaterMark: 0 });
  const res = await call(handler, "POST", "/", {
    ...attacker,
    token: "a-0",
    body: body(),
  });
  assert.equal(res.status, 429);
  assert.equal(pulled, 0, "the refusal came before the body");
  const token = (await call(handler, "POST", "/users", { body: "ann" })).json
    .token;
  await call(handler, "POST", "/", { ...other, token, body: body() });
  assert.equal(pulled, 1, "an accepted post reads its body");
  const metrics = (await call(handler, "GET", "/metrics")).text;
  assert.match(metrics, /^lms_auth_failures_total 1$/m);
  assert.match(metrics, /^lms_auth_refused_total 1$/m);
});

Deno.test("an out-of-range authFailures is refused when the service is built", () => {
  for (const rate of [{ burst: 0, periodMs: 100 }, { burst: 1, periodMs: 0 }]) {
    assert.throws(
      () => createHandler({ authFailures: rate }),
      /^RangeError: authFailures needs a whole burst/,
    );
  }
});
