import assert from "node:assert/strict";
import { createHandler } from "../../src/program/app.ts";
import { call } from "../_support/call.ts";

const ALLOWED = "https://pages.example";
const OTHER = "https://elsewhere.example";

const preflight = (origin: string, method = "POST") => ({
  headers: {
    origin,
    "access-control-request-method": method,
    "access-control-request-headers": "x-messaging-token",
  },
});

Deno.test("without --cors-origin nothing is added and OPTIONS stays 405", async () => {
  const handler = createHandler();
  const res = await call(handler, "GET", "/quote", {
    headers: { origin: ALLOWED },
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("access-control-allow-origin"), null);
  const options = await call(handler, "OPTIONS", "/users", preflight(ALLOWED));
  assert.equal(options.status, 405);
  assert.equal(options.headers.get("allow"), "DELETE, GET, HEAD, POST");
  assert.equal(options.headers.get("access-control-allow-origin"), null);
});

Deno.test("an allowed origin gets Access-Control-Allow-Origin and Vary on every answer, errors included", async () => {
  const handler = createHandler({ corsOrigins: [ALLOWED] });
  const answers = [
    await call(handler, "GET", "/quote", { headers: { origin: ALLOWED } }),
    await call(handler, "POST", "/quote", {
      headers: { origin: ALLOWED },
      body: "lowercase",
    }),
    await call(handler, "GET", "/users", { headers: { origin: ALLOWED } }),
    await call(handler, "GET", "/nowhere", { headers: { origin: ALLOWED } }),
    await call(handler, "PUT", "/", { headers: { origin: ALLOWED } }),
    await call(handler, "GET", "/chat", { headers: { origin: ALLOWED } }),
  ];
  assert.deepEqual(answers.map((a) => a.status), [
    200,
    400,
    401,
    404,
    405,
    200,
  ]);
  for (const answer of answers) {
    assert.equal(answer.headers.get("access-control-allow-origin"), ALLOWED);
    assert.match(answer.headers.get("vary") ?? "", /\bOrigin\b/);
    assert.match(
      answer.headers.get("access-control-expose-headers") ?? "",
      /Retry-After/,
    );
  }
});

Deno.test("a preflight from an allowed origin is 204 with the route's methods and the token header", async () => {
  const handler = createHandler({ corsOrigins: [OTHER, ALLOWED] });
  for (
    const [path, methods] of [
      ["/users", "DELETE, GET, HEAD, POST"],
      ["/", "GET, HEAD, POST"],
      ["/quote", "GET, HEAD, POST"],
      ["/events", "GET, HEAD"],
    ] as const
  ) {
    const res = await call(handler, "OPTIONS", path, preflight(ALLOWED));
    assert.equal(res.status, 204, path);
    assert.equal(res.text, "");
    assert.equal(res.headers.get("access-control-allow-origin"), ALLOWED);
    assert.equal(res.headers.get("access-control-allow-methods"), methods);
    assert.equal(
      res.headers.get("access-control-allow-headers"),
      "X-Messaging-Token, Content-Type",
    );
    assert.match(res.headers.get("vary") ?? "", /\bOrigin\b/);
  }
  const unknown = await call(
    handler,
    "OPTIONS",
    "/nowhere",
    preflight(ALLOWED),
  );
  assert.equal(unknown.status, 404);
});

Deno.test("a refused origin gets nothing added, and its preflight is 405", async () => {
  const handler = createHandler({ corsOrigins: [ALLOWED] });
  const simple = await call(handler, "GET", "/", {
    headers: { origin: OTHER },
  });
  assert.equal(simple.status, 200);
  assert.equal(simple.headers.get("access-control-allow-origin"), null);
  const options = await call(handler, "OPTIONS", "/", preflight(OTHER));
  assert.equal(options.status, 405);
  assert.equal(options.headers.get("access-control-allow-origin"), null);
  const none = await call(handler, "OPTIONS", "/", {});
  assert.equal(none.status, 405, "no Origin at all is no preflight");
});

Deno.test("* allows any origin", async () => {
  const handler = createHandler({ corsOrigins: ["*"] });
  const res = await call(handler, "GET", "/", { headers: { origin: OTHER } });
  assert.equal(res.headers.get("access-control-allow-origin"), "*");
  const options = await call(handler, "OPTIONS", "/quote", preflight(OTHER));
  assert.equal(options.status, 204);
});

Deno.test("an event stream carries the CORS headers too", async () => {
  const handler = createHandler({ corsOrigins: [ALLOWED] });
  for (const path of ["/events", "/quote/events"]) {
    const res = await handler(
      new Request(`http://service.test${path}`, {
        headers: { origin: ALLOWED },
      }),
    );
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("access-control-allow-origin"), ALLOWED);
    await res.body?.cancel();
  }
});
