import assert from "node:assert/strict";
import * as main from "../mod.ts";
import * as client from "../src/client/client.ts";

Deno.test("the main entry exports the client entry's values, the very same ones", () => {
  const values = Object.keys(client);
  assert.deepEqual(values.sort(), [
    "MessagingClient",
    "QuoteClient",
    "ServiceError",
  ]);
  for (const name of values) {
    assert.equal(
      (main as Record<string, unknown>)[name],
      (client as Record<string, unknown>)[name],
      name,
    );
  }
});

Deno.test("a handler from the main entry serves both services and its OpenAPI description", async () => {
  const handler = main.createHandler();
  const quote = await handler(new Request("http://service.test/quote"));
  assert.equal(quote.headers.get("content-type"), main.JSON_CONTENT_TYPE);
  assert.equal(typeof await quote.json(), "string");
  const doc =
    await (await handler(new Request("http://service.test/openapi.json")))
      .json();
  assert.deepEqual(doc, main.openApiDocument());
});
