import assert from "node:assert/strict";
import { createRouter, mergeRoutes } from "../../src/http/router.ts";
import { createBodyReader } from "../../src/http/body.ts";
import { HttpError } from "../../src/http/http_error.ts";
import { jsonResponse, statusResponse } from "../../src/http/response.ts";
import { call, CONTENT_TYPE } from "../_support/call.ts";

/** An error of another layer, which only the mapper the router is given knows. */
class Gone extends Error {}

const echoBody = createBodyReader({ maxBytes: 8, timeoutMs: 10_000 });
const faults: unknown[] = [];
const router = createRouter({
  "/": { GET: () => jsonResponse('"root"'), POST: () => jsonResponse("1") },
  "/items": {
    GET: () => jsonResponse('["a","b"]'),
    DELETE: () => jsonResponse("null"),
  },
  "/throws": {
    GET: () => {
      throw new Error("secret detail");
    },
    POST: () => Promise.reject(new TypeError("async secret")),
  },
  "/down": {
    GET: () => Promise.reject(new Gone("redis gone")),
  },
  "/limited": {
    POST: () => {
      throw new HttpError(429, [
        { location: "url", name: "rate", description: "Slow down" },
      ], { "retry-after": "3" });
    },
  },
  "/echo": {
    POST: async (req) => jsonResponse(JSON.stringify(await echoBody.text(req))),
  },
}, {
  logFault: (error) => faults.push(error),
  mapError: (error) => error instanceof Gone ? statusResponse(503) : undefined,
});

Deno.test("an unknown path is 404 with the JSON body", async () => {
  for (const path of ["/nope", "/items/", "/ITEMS", "//items", "/%69tems"]) {
    const res = await call(router, "GET", path);
    assert.equal(res.status, 404, path);
    assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
    assert.deepEqual(res.json, { status: 404, message: "Not Found" });
  }
});

Deno.test("a query string changes nothing", async () => {
  assert.deepEqual((await call(router, "GET", "/items?x=1&y")).json, [
    "a",
    "b",
  ]);
  assert.equal((await call(router, "GET", "/?")).json, "root");
});

Deno.test("a method the path does not serve is 405 with Allow", async () => {
  for (
    const [method, path, allow] of [
      ["PUT", "/items", "DELETE, GET, HEAD"],
      ["POST", "/items", "DELETE, GET, HEAD"],
      ["DELETE", "/", "GET, HEAD, POST"],
      ["OPTIONS", "/", "GET, HEAD, POST"],
      ["GET", "/echo", "POST"],
      ["HEAD", "/echo", "POST"],
    ] as const
  ) {
    const res = await call(router, method, path);
    assert.equal(res.status, 405, `${method} ${path}`);
    assert.equal(res.headers.get("allow"), allow);
    assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
    if (method !== "HEAD") {
      assert.deepEqual(res.json, {
        status: 405,
        message: "Method Not Allowed",
      });
    }
  }
});

Deno.test("HEAD answers what GET would, with no body", async () => {
  const get = await call(router, "GET", "/items");
  const head = await call(router, "HEAD", "/items");
  assert.equal(head.status, get.status);
  assert.equal(head.text, "");
  assert.equal(head.headers.get("content-type"), CONTENT_TYPE);
  assert.equal(head.headers.get("content-length"), String(get.text.length));
});

Deno.test("a fault is 500 with a bare body, logged on the server only", async () => {
  faults.length = 0;
  for (const method of ["GET", "POST"]) {
    const res = await call(router, method, "/throws");
    assert.equal(res.status, 500);
    assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
    assert.deepEqual(res.json, {
      status: 500,
      message: "Internal Server Error",
    });
    assert.doesNotMatch(res.text, /secret|TypeError|\.ts:/);
  }
  assert.equal(faults.length, 2);
  assert.match(String(faults[0]), /secret detail/);
});

Deno.test("an error the mapper knows is answered as it says, not as a fault", async () => {
  faults.length = 0;
  const res = await call(router, "GET", "/down");
  assert.equal(res.status, 503);
  assert.deepEqual(res.json, { status: 503, message: "Service Unavailable" });
  assert.equal(faults.length, 0);
});

Deno.test("a body over the limit is 413 with the error envelope naming the limit", async () => {
  const res = await call(router, "POST", "/echo", { body: "123456789" });
  assert.equal(res.status, 413);
  assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
  assert.deepEqual(res.json, {
    status: "error",
    errors: [{
      location: "body",
      name: "body",
      description: "Request body is larger than the limit of 8 bytes",
    }],
  });
  assert.equal(
    (await call(router, "POST", "/echo", { body: "12345678" })).json,
    "12345678",
  );
});

Deno.test("an HttpError thrown by a handler is answered with its status, envelope and headers", async () => {
  faults.length = 0;
  const res = await call(router, "POST", "/limited");
  assert.equal(res.status, 429);
  assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
  assert.equal(res.headers.get("retry-after"), "3");
  assert.deepEqual(res.json, {
    status: "error",
    errors: [{ location: "url", name: "rate", description: "Slow down" }],
  });
  assert.equal(faults.length, 0);
});

Deno.test("mergeRoutes joins tables and refuses a path served twice", () => {
  const get = () => jsonResponse("1");
  assert.deepEqual(
    Object.keys(mergeRoutes({ "/a": { GET: get } }, { "/b": { GET: get } })),
    ["/a", "/b"],
  );
  assert.throws(
    () => mergeRoutes({ "/a": { GET: get } }, { "/a": { POST: get } }),
    /two services serve the path \/a/,
  );
});
