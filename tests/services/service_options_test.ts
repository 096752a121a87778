/**
 * What the options every service factory takes do, seen at the handler:
 * the defaults are the contract's, and a value out of its range is refused
 * when the service is built, not when a request arrives.
 */
import assert from "node:assert/strict";
import { createMessagingService } from "../../src/services/messaging.ts";
import { createQuoteService } from "../../src/services/quote.ts";
import {
  SERVICE_LIMITS,
  type ServiceOptions,
} from "../../src/services/service_options.ts";
import { call, connectionFrom } from "../_support/call.ts";

const quote = (length: number) => `A${"a".repeat(length - 2)}.`;

Deno.test("the body limit: 65,536 bytes by default, or as given", async () => {
  const service = createQuoteService();
  const limit = SERVICE_LIMITS.maxBodyBytes.default;
  assert.equal(limit, 65_536);
  const at = await call(service, "POST", "/quote", { body: quote(limit) });
  assert.equal(at.status, 200);
  const over = await call(service, "POST", "/quote", {
    body: quote(limit + 1),
  });
  assert.equal(over.status, 413);
  const small = createQuoteService({ maxBodyBytes: 10 });
  assert.equal(
    (await call(small, "POST", "/quote", { body: quote(10) })).status,
    200,
  );
  assert.equal(
    (await call(small, "POST", "/quote", { body: quote(11) })).status,
    413,
  );
});

Deno.test("each number out of its range is a RangeError naming the option, from either factory", () => {
  for (const [name, limit] of Object.entries(SERVICE_LIMITS)) {
    for (
      const value of [limit.min - 1, limit.max + 1, limit.min + 0.5, Number.NaN]
    ) {
      const options: ServiceOptions = { [name]: value };
      for (const factory of [createQuoteService, createMessagingService]) {
        assert.throws(
          () => factory(options),
          (error) =>
            error instanceof RangeError && error.message.startsWith(name),
          `${factory.name}({ ${name}: ${value} })`,
        );
      }
    }
    for (const value of [limit.min, limit.max, limit.default]) {
      createQuoteService({ [name]: value });
    }
  }
});

Deno.test("the stream caps reach the handler: past maxStreams 503, past a client's share 429", async () => {
  const stopping = new AbortController();
  const service = createQuoteService({
    maxStreams: 2,
    maxStreamsPerClient: 1,
    stopSignal: stopping.signal,
    clientOf: (req) => req.headers.get("x-client") ?? "none",
  });
  const open = (client: string) =>
    service(
      new Request("http://service.test/quote/events", {
        headers: { "x-client": client },
      }),
    );
  try {
    assert.equal((await open("a")).status, 200);
    assert.equal((await open("a")).status, 429);
    assert.equal((await open("b")).status, 200);
    assert.equal((await open("c")).status, 503);
  } finally {
    stopping.abort();
  }
});

Deno.test("trustProxy alone makes the forwarded address the client the stream caps count", async () => {
  const stopping = new AbortController();
  const service = createQuoteService({
    maxStreamsPerClient: 1,
    trustProxy: true,
    stopSignal: stopping.signal,
  });
  // Every request comes through the one proxy at 10.0.0.1.
  const open = (client: string) =>
    service(
      new Request("http://service.test/quote/events", {
        headers: { "x-forwarded-for": `203.0.113.9, ${client}` },
      }),
      connectionFrom("10.0.0.1"),
    );
  try {
    assert.equal((await open("192.0.2.1")).status, 200);
    assert.equal((await open("192.0.2.1")).status, 429);
    assert.equal((await open("192.0.2.2")).status, 200, "another client");
  } finally {
    stopping.abort();
  }
});
