/** `/healthz` and `/readyz` at handler level, whatever services are selected. */
import type { Readiness } from "../../src/store/store.ts";
import assert from "node:assert/strict";
import { createHandler } from "../../src/program/app.ts";
import { MemoryStore } from "../../src/store/memory_store.ts";
import { call, CONTENT_TYPE } from "../_support/call.ts";

Deno.test("every selection serves /healthz, /readyz and /metrics", async () => {
  for (const service of ["all", "messaging", "quote"] as const) {
    const handler = createHandler({ service });
    const health = await call(handler, "GET", "/healthz");
    assert.equal(health.status, 200);
    assert.equal(health.headers.get("content-type"), CONTENT_TYPE);
    assert.deepEqual(health.json, { status: "ok" });
    const ready = await call(handler, "GET", "/readyz");
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.json, { status: "ready" });
    assert.equal((await call(handler, "GET", "/metrics")).status, 200);
    assert.equal((await call(handler, "HEAD", "/healthz")).status, 200);
    assert.equal((await call(handler, "POST", "/readyz")).status, 405);
  }
});

Deno.test("/readyz is 503 while the store cannot serve, saying why", async () => {
  class DownStore extends MemoryStore {
    override isReady(): Readiness {
      return { ready: false, reason: "out of memory" };
    }
  }
  const handler = createHandler({ store: new DownStore() });
  const ready = await call(handler, "GET", "/readyz");
  assert.equal(ready.status, 503);
  assert.deepEqual(ready.json, {
    status: 503,
    message: "Service Unavailable",
    reason: "out of memory",
  });
  // As every 503 of a store that cannot serve: when to ask again.
  assert.equal(ready.headers.get("retry-after"), "1");
  assert.equal((await call(handler, "GET", "/healthz")).status, 200);
});
