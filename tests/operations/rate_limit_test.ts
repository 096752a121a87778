/**
 * The rate limit at handler level: every write spends the client's
 * allowance, a refused write is 429 with an honest `Retry-After` and stores
 * nothing, reads are never limited, and who the client is.
 */
import assert from "node:assert/strict";
import { clientAddressOf } from "../../src/http/client_address.ts";
import { createHandler } from "../../src/program/app.ts";
import { MemoryStore } from "../../src/store/memory_store.ts";
import { call, CONTENT_TYPE } from "../_support/call.ts";

function limited(trustProxy = false) {
  const store = new MemoryStore();
  const handler = createHandler({
    store,
    rateLimit: { burst: 2, periodMs: 30_000 },
    clientOf: clientAddressOf({ trustProxy }),
  });
  return { store, handler };
}

Deno.test("a client's burst of writes passes; the next is 429 with the envelope and Retry-After, and stores nothing", async () => {
  const { store, handler } = limited();
  const from = { client: "192.0.2.1" };
  const { json: { token } } = await call(handler, "POST", "/users", {
    ...from,
    body: "ann",
  });
  assert.equal(
    (await call(handler, "POST", "/quote", { ...from, body: "First." }))
      .status,
    200,
  );
  const refused = await call(handler, "POST", "/quote", {
    ...from,
    body: "Second!",
  });
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get("content-type"), CONTENT_TYPE);
  assert.equal(refused.headers.get("retry-after"), "30");
  assert.deepEqual(refused.json, {
    status: "error",
    errors: [{
      location: "url",
      name: "rate",
      description:
        "Too many writes from this client: 2 at once, then one every 30 seconds; try again in 30 seconds",
    }],
  });
  assert.equal(store.getQuote(), "First.", "nothing stored on a 429");
  // Every write is limited: registering, posting, unregistering.
  for (
    const [method, path, body] of [
      ["POST", "/users", "bob"],
      ["POST", "/", '{"text":"hi"}'],
      ["DELETE", "/users", undefined],
    ] as const
  ) {
    const res = await call(handler, method, path, { ...from, body, token });
    assert.equal(res.status, 429, `${method} ${path}`);
  }
  assert.deepEqual(store.listUsers(), ["ann"]);
  assert.deepEqual(store.newestMessages(5), []);
  // Reads are never limited, nor are other clients.
  for (let i = 0; i < 20; i++) {
    assert.equal((await call(handler, "GET", "/quote", from)).status, 200);
    assert.equal((await call(handler, "GET", "/", from)).status, 200);
    assert.equal(
      (await call(handler, "GET", "/users", { ...from, token })).status,
      200,
    );
  }
  assert.equal(
    (await call(handler, "POST", "/quote", {
      client: "192.0.2.2",
      body: "Other.",
    })).status,
    200,
  );
});

Deno.test("without --trust-proxy, X-Forwarded-For is ignored: a client cannot dodge the limit with it", async () => {
  const { handler } = limited();
  const statuses = [];
  for (let i = 0; i < 3; i++) {
    statuses.push(
      (await call(handler, "POST", "/quote", {
        client: "192.0.2.1",
        headers: { "x-forwarded-for": `198.51.100.${i}` },
        body: "Hi.",
      })).status,
    );
  }
  assert.deepEqual(statuses, [200, 200, 429]);
});

Deno.test("with --trust-proxy, the client is the last X-Forwarded-For address, the one the proxy appended", async () => {
  const { handler } = limited(true);
  const post = async (forwardedFor: string) =>
    (await call(handler, "POST", "/quote", {
      client: "10.0.0.1",
      headers: { "x-forwarded-for": forwardedFor },
      body: "Hi.",
    })).status;
  // What a client puts first is its own business; the last entry decides.
  assert.equal(await post("1.1.1.1, 203.0.113.5"), 200);
  assert.equal(await post("2.2.2.2, 203.0.113.5"), 200);
  assert.equal(await post("3.3.3.3,203.0.113.5"), 429);
  assert.equal(await post("203.0.113.5, 203.0.113.6"), 200);
});

Deno.test("without a rate limit, writes are never refused", async () => {
  const handler = createHandler({});
  for (let i = 0; i < 50; i++) {
    const res = await call(handler, "POST", "/quote", {
      client: "192.0.2.1",
      body: "Hi.",
    });
    assert.equal(res.status, 200);
  }
});

Deno.test("a rate limit that could never allow a write, or never refill, is refused at start", () => {
  for (
    const rateLimit of [
      { burst: 0, periodMs: 1000 },
      { burst: 1.5, periodMs: 1000 },
      { burst: 5, periodMs: 0 },
    ]
  ) {
    assert.throws(() => createHandler({ rateLimit }), RangeError);
  }
});
