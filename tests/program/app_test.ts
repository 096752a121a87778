import assert from "node:assert/strict";
import { createHandler } from "../../src/program/app.ts";
import { createMessagingService } from "../../src/services/messaging.ts";
import { createQuoteService } from "../../src/services/quote.ts";
import { MemoryStore } from "../../src/store/memory_store.ts";
import { StoreUnavailableError } from "../../src/store/store.ts";
import { call } from "../_support/call.ts";

const paths: [string, string, "messaging" | "quote"][] = [
  ["GET", "/", "messaging"],
  ["POST", "/users", "messaging"],
  ["GET", "/quote", "quote"],
];

for (const service of ["all", "messaging", "quote"] as const) {
  Deno.test(`--service=${service} serves its paths and answers 404 on the others`, async () => {
    const handler = createHandler({ service });
    for (const [method, path, owner] of paths) {
      const res = await call(handler, method, path, {
        body: method === "POST" ? "alice" : undefined,
      });
      const served = service === "all" || service === owner;
      assert.equal(res.status, served ? 200 : 404, `${method} ${path}`);
    }
  });
}

/** A store whose backend is gone: every read and write fails as unavailable. */
class DownStore extends MemoryStore {
  override newestMessages(): string[] {
    throw new StoreUnavailableError("gone");
  }
  override getQuote(): string {
    throw new StoreUnavailableError("gone");
  }
  override registerUser(): never {
    throw new StoreUnavailableError("gone");
  }
}

Deno.test("an unreachable store is answered 503 by every way of building the services, and is not logged as a fault", async () => {
  const faults: unknown[] = [];
  const store = new DownStore();
  const handlers = [
    createHandler({ store, logFault: (e) => faults.push(e) }),
    createMessagingService({ store }),
    createQuoteService({ store }),
  ];
  const calls: [number, string, string][] = [
    [0, "GET", "/"],
    [0, "GET", "/quote"],
    [0, "POST", "/users"],
    [1, "GET", "/"],
    [1, "POST", "/users"],
    [2, "GET", "/quote"],
  ];
  for (const [index, method, path] of calls) {
    const handler = handlers[index];
    assert.ok(handler);
    const res = await call(handler, method, path, {
      body: method === "POST" ? "alice" : undefined,
    });
    assert.equal(res.status, 503, `${index} ${method} ${path}`);
    assert.deepEqual(res.json, { status: 503, message: "Service Unavailable" });
  }
  assert.deepEqual(faults, []);
});

Deno.test("an observer that throws is a fault logged as others are; the answer still goes out", async () => {
  const faults: string[] = [];
  const handler = createHandler({
    onResponse: () => {
      throw new Error("a bug in the log");
    },
    logFault: (error, req) =>
      faults.push(`${req.method} ${new URL(req.url).pathname}: ${error}`),
  });
  const quote = await call(handler, "GET", "/quote");
  assert.equal(quote.status, 200);
  const posted = await call(handler, "POST", "/quote", { body: "Hello." });
  assert.equal(posted.status, 200);
  assert.deepEqual(faults, [
    "GET /quote: Error: a bug in the log",
    "POST /quote: Error: a bug in the log",
  ]);
});
