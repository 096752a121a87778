/**
 * The OpenAPI description: valid OpenAPI 3.1, the same as the committed
 * `openapi.json`, and true of the running program: every answer it gives is
 * listed for its path, method and status, with a body its schema accepts.
 */

import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { openApiDocument } from "../../src/openapi/openapi_document.ts";
import { CONTENT_TYPE, utf8Header } from "../_support/call.ts";
import { startServer } from "../_support/program.ts";
import { rawUpgrade } from "../_support/socket_reader.ts";
import { createHandler } from "../../src/program/app.ts";
import { messagingRoutes } from "../../src/services/messaging.ts";
import { MESSAGING_OPERATIONS } from "../../src/services/messaging_operations.ts";
import { quoteRoutes } from "../../src/services/quote.ts";
import { QUOTE_OPERATIONS } from "../../src/services/quote_operations.ts";

const FILE = new URL("../../openapi.json", import.meta.url);

Deno.test("the document is valid OpenAPI 3.1", async () => {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(openApiDocument()));
  assert.deepEqual(result.errors, undefined);
  assert.equal(result.valid, true);
  assert.equal(validator.version, "3.1");
});

Deno.test("openapi.json is the document as it is now (deno task openapi writes it)", async () => {
  assert.deepEqual(
    JSON.parse(await Deno.readTextFile(FILE)),
    openApiDocument(),
  );
});

Deno.test("every answer of the running program matches the document", async () => {
  const server = await startServer([
    "--quiet",
    "--max-users=3",
    "--max-body-bytes=100",
    "--max-streams=3",
    "--max-streams-per-client=2",
    "--rate-limit=1/600",
    "--auth-failures=1/600",
    "--trust-proxy",
    "--body-timeout-ms=300",
  ]);
  try {
    const served = await (await fetch(`${server.url}openapi.json`)).json();
    assert.deepEqual(served, openApiDocument());

    const validator = new Validator();
    await validator.validate(structuredClone(served));
    // deno-lint-ignore no-explicit-any
    const doc = validator.resolveRefs() as any;
    // OpenAPI's own keywords (examples) are not JSON Schema's.
    const ajv = new Ajv2020({ strict: false });
    const checked = new Set<string>();

    // Each call comes from a client of its own (the proxy's header is
    // trusted), so the rate limit refuses only where a client is named.
    let clients = 0;
    const call = async (
      method: string,
      path: string,
      body?: string | ReadableStream<Uint8Array>,
      token?: string,
      client = `192.0.2.${++clients}`,
      extra: Record<string, string> = {},
    ) => {
      const headers: Record<string, string> = token
        ? { ...extra, "x-messaging-token": utf8Header(token) }
        : { ...extra };
      headers["x-forwarded-for"] = client;
      const res = await fetch(`${server.url}${path.slice(1)}`, {
        method,
        headers,
        body,
        ...(body instanceof ReadableStream && { duplex: "half" }),
      } as RequestInit);
      // The path alone picks the route: the document lists it without the query.
      const route = path.split("?")[0]!;
      const operation = doc.paths[route]?.[method.toLowerCase()];
      assert.ok(operation, `${method} ${path} is not in the document`);
      const described = operation.responses[String(res.status)];
      assert.ok(
        described,
        `${method} ${path} ${res.status} is not in the document`,
      );
      const media = described.content?.[res.headers.get("content-type")!];
      assert.ok(
        media,
        `${method} ${path} ${res.status}: content type ${
          res.headers.get("content-type")
        } not described`,
      );
      assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
      const value = await res.json();
      const validate = ajv.compile(media.schema);
      assert.ok(
        validate(value),
        `${method} ${path} ${res.status}: ${
          JSON.stringify(value)
        } fails its schema: ${ajv.errorsText(validate.errors)}`,
      );
      checked.add(`${method} ${route} ${res.status}`);
      return value;
    };

    const { token } = (await call("POST", "/users", "José")) as {
      token: string;
    };
    await call("POST", "/users", "José");
    await call("POST", "/users", "a-b");
    await call("POST", "/users", "x".repeat(101));
    await call("POST", "/users", "ann");
    await call("POST", "/users", "bea");
    await call("POST", "/users", "full");
    await call("GET", "/users", undefined, token);
    await call("GET", "/users", undefined, "José-0000");
    await call("GET", "/users/online", undefined, token);
    await call("GET", "/users/online", undefined, "José-0000");
    await call("GET", "/events", undefined, "José-0000");
    await call("POST", "/", '{"text":"hi","mood":"good"}', token);
    await call("POST", "/", '{"text":"red","color":"red"}', token);
    await call("POST", "/", "{", token);
    await call("POST", "/", '{"text":1}', token);
    await call("POST", "/", "{}", token);
    await call("POST", "/", '{"text":"x","color":"blue"}', token);
    await call("POST", "/", "y".repeat(101), token);
    await call("POST", "/", "{}");
    await call("GET", "/");
    await call("GET", "/messages");
    await call("GET", "/messages?before=2&limit=1");
    await call("GET", "/messages?before=0&limit=101");
    await call("GET", "/quote");
    await call("POST", "/quote", "Fine.");
    await call("POST", "/quote", "no");
    await call("POST", "/quote", "Z".repeat(101));
    await call("DELETE", "/users", undefined, token);
    await call("DELETE", "/users", undefined, token);
    await call("GET", "/openapi.json");
    await call("GET", "/healthz");
    await call("GET", "/readyz");
    const metrics = await fetch(`${server.url}metrics`);
    assert.ok(
      doc.paths["/metrics"].get.responses["200"].content[
        metrics.headers.get("content-type")!
      ],
    );
    assert.match(await metrics.text(), /^# HELP /);
    checked.add(`GET /metrics ${metrics.status}`);
    // A client's write after its one allowed write is refused, whatever
    // it is.
    const { token: limitedToken } = await call("POST", "/users", "lim") as {
      token: string;
    };
    for (
      const [i, [method, path, body]] of ([
        ["POST", "/users", "Again"],
        ["DELETE", "/users", undefined],
        ["POST", "/", '{"text":"again"}'],
        ["POST", "/quote", "Again."],
      ] as const).entries()
    ) {
      // A client of its own for each write: its one allowed write first.
      const client = `198.51.100.${i + 1}`;
      const first = await call("POST", "/quote", "First.", undefined, client);
      assert.equal(first, null, `${method} ${path}: the allowed write`);
      const refused = await call(method, path, body, limitedToken, client) as {
        errors: { name: string }[];
      };
      assert.equal(refused.errors[0]?.name, "rate", `${method} ${path}`);
    }

    // A client that failed to authenticate is refused on every call that
    // takes a token, with the right one too.
    await call("GET", "/users", undefined, "José-0000", "198.51.100.250");
    for (
      const [method, path, body] of [
        ["GET", "/users", undefined],
        ["GET", "/users/online", undefined],
        ["GET", "/events", undefined],
        ["POST", "/", '{"text":"again"}'],
        ["DELETE", "/users", undefined],
      ] as const
    ) {
      const refused = await call(
        method,
        path,
        body,
        limitedToken,
        "198.51.100.250",
      ) as {
        errors: { name: string; description: string }[];
      };
      assert.match(
        refused.errors[0]?.description ?? "",
        /^Too many failed authentications/,
        `${method} ${path}`,
      );
    }

    // 404 and 405 on any path, as the shared responses describe them.
    for (
      const [method, path, name] of [
        ["GET", "/nowhere", "NotFound"],
        ["PUT", "/quote", "MethodNotAllowed"],
        ["DELETE", "/", "MethodNotAllowed"],
      ] as const
    ) {
      const res = await fetch(`${server.url}${path.slice(1)}`, { method });
      const described = doc.components.responses[name];
      const media = described.content[res.headers.get("content-type")!];
      assert.ok(media, `${method} ${path}`);
      const validate = ajv.compile(media.schema);
      assert.ok(validate(await res.json()), `${method} ${path}`);
      assert.equal(
        Object.values(
          media.examples as Record<string, { value: { status: number } }>,
        )[0]?.value.status,
        res.status,
      );
      for (const header of Object.keys(described.headers ?? {})) {
        assert.ok(res.headers.has(header), `${method} ${path}: ${header}`);
      }
    }
    assert.deepEqual(doc.servers, [{ url: "/" }]);

    // The page: its 200 is HTML.
    const page = await fetch(`${server.url}chat`);
    assert.ok(
      doc.paths["/chat"].get.responses["200"].content[
        page.headers.get("content-type")!
      ],
    );
    assert.match(await page.text(), /^<!doctype html>/);
    checked.add(`GET /chat ${page.status}`);

    // The streams: their 200 is an open text/event-stream; past the
    // client's cap 429, past the server's 503.
    const streams: ReadableStream<Uint8Array>[] = [];
    const open = async (path: string, client: string) => {
      const res = await fetch(`${server.url}${path.slice(1)}`, {
        headers: { "x-forwarded-for": client },
      });
      const described = doc.paths[path].get.responses[String(res.status)];
      assert.ok(described?.content?.[res.headers.get("content-type")!], path);
      assert.equal(res.headers.get("cache-control"), "no-cache");
      checked.add(`GET ${path} ${res.status}`);
      streams.push(res.body!);
    };
    await open("/events", "203.0.113.1");
    await open("/quote/events", "203.0.113.1");
    for (const path of ["/events", "/quote/events"]) {
      const tooMany = await call(
        "GET",
        path,
        undefined,
        undefined,
        "203.0.113.1",
      ) as {
        errors: { name: string }[];
      };
      assert.equal(tooMany.errors[0]?.name, "events");
    }
    await open("/events", "203.0.113.2");
    const full = await call(
      "GET",
      "/events",
      undefined,
      undefined,
      "203.0.113.3",
    ) as {
      errors: { name: string }[];
    };
    assert.equal(full.errors[0]?.name, "events");
    for (const body of streams) await body.cancel();

    // A body that never ends is 408 past `--body-timeout-ms`.
    for (const path of ["/users", "/", "/quote"]) {
      const body = new ReadableStream({
        start: (c) => c.enqueue(new TextEncoder().encode("A")),
      });
      await call("POST", path, body, limitedToken);
    }
    // A stream's WebSocket upgrade: 403 from a foreign page, 400 when it
    // is not a WebSocket handshake.
    for (const path of ["/events", "/quote/events"]) {
      const foreign = await rawUpgrade(`${server.url}${path.slice(1)}`, {
        Origin: "https://elsewhere.example",
      });
      foreign.conn.close();
      assert.ok(doc.paths[path].get.responses[String(foreign.status)], path);
      checked.add(`GET ${path} ${foreign.status}`);
      const notUpgrade = await call(
        "GET",
        path,
        undefined,
        undefined,
        "203.0.113.4",
        {
          upgrade: "websocket",
        },
      ) as { errors: { name: string }[] };
      assert.equal(notUpgrade.errors[0]?.name, "upgrade");
    }

    // Every operation's success answer was seen, and every documented
    // status of the messaging and quote calls but 500 and 503.
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item as object)) {
        for (const status of Object.keys(op.responses)) {
          if (status === "500" || (status === "503" && path !== "/users")) {
            continue;
          }
          if (
            status === "503" && method !== "post" && path !== "/events"
          ) continue;
          const seen = `${method.toUpperCase()} ${path} ${status}`;
          assert.ok(checked.has(seen), `never saw ${seen}`);
        }
      }
    }
  } finally {
    await server.stop();
  }
});

Deno.test("each route table and its operations list the same paths and methods", () => {
  // HEAD follows from GET, in the router and in the document alike.
  const methods = (table: object) =>
    Object.entries(table).map(([path, m]) =>
      `${path} ${Object.keys(m).filter((k) => k !== "HEAD").sort()}`
    );
  for (
    const [routes, operations] of [
      [messagingRoutes(), MESSAGING_OPERATIONS],
      [quoteRoutes(), QUOTE_OPERATIONS],
    ] as const
  ) {
    assert.deepEqual(methods(routes).sort(), methods(operations).sort());
  }
});

Deno.test("every documented path serves exactly the documented methods", async () => {
  const handler = createHandler();
  const paths = openApiDocument().paths as Record<string, object>;
  for (const [path, operations] of Object.entries(paths)) {
    const res = await handler(
      new Request(`http://localhost${path}`, { method: "PUT" }),
    );
    await res.body?.cancel();
    const documented = Object.keys(operations).map((m) => m.toUpperCase());
    if (documented.includes("GET")) documented.push("HEAD");
    assert.equal(res.headers.get("allow"), documented.sort().join(", "), path);
  }
});
