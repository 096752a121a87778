/**
 * A request generator that knows the service from its OpenAPI document
 * alone: it builds requests from each operation's schemas (bodies the
 * schema accepts and bodies it refuses, with the token got by following
 * the register link, without it, or with a wrong one) and checks that the
 * handler answers as the document says. The only knowledge not read from
 * the document is HTTP's own: a header carries bytes, so the token goes
 * as its UTF-8 bytes (as the security scheme's description says), and
 * header parameters are drawn from visible ASCII.
 *
 * A schema-valid body may still be refused where no schema can say so, and
 * the document says which: with an entry at `url` (the name is taken), or
 * one named `body` (cut short, too slow, over the limit in bytes). Bytes
 * that are not UTF-8 cannot be drawn from a string schema at all.
 */

import assert from "node:assert/strict";
import fc from "fast-check";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { createHandler } from "../../src/program/app.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const ajv = new Ajv2020({ strict: false });
const validators = new Map<object, (value: unknown) => boolean>();
/** Whether `value` is valid against `schema`, each schema compiled once. */
function valid(schema: object, value: unknown): boolean {
  let validate = validators.get(schema);
  if (validate === undefined) {
    const compiled = ajv.compile(schema);
    validate = (v) => compiled(v) as boolean;
    validators.set(schema, validate);
  }
  return validate(value);
}

/** A string as the service receives it: lone surrogates cannot travel in UTF-8. */
const sent = (text: string) => text.toWellFormed();
const anyText = fc.string({ unit: "binary", maxLength: 80 }).map(sent);

/**
 * A value as the schema judges it: text whose schema says `x-normalized`
 * is read by the service in that Unicode form, and judged so.
 */
const judged = (schema: Json, value: unknown) =>
  typeof value === "string" && schema["x-normalized"]
    ? value.normalize(schema["x-normalized"])
    : value;

/** Values `schema` accepts. */
function valuesOf(schema: Json): fc.Arbitrary<unknown> {
  let values: fc.Arbitrary<unknown>;
  if ("const" in schema) values = fc.constant(schema.const);
  else if (schema.enum) values = fc.constantFrom(...schema.enum);
  else if (schema.type === "string") {
    const { pattern, minLength = 0, maxLength = 80 } = schema;
    values = fc.oneof(
      anyText,
      fc.string({ unit: "binary", minLength, maxLength }).map(sent),
      // At the bound, where a wrong length shows.
      fc.string({ minLength: Math.max(minLength, maxLength - 2), maxLength }),
      ...(pattern ? [fc.stringMatching(new RegExp(pattern, "u"))] : []),
    );
    // Text the service normalizes is also sent decomposed.
    if (schema["x-normalized"]) {
      values = fc.oneof(
        values,
        values.map((v) => (v as string).normalize("NFD")),
      );
    }
  } else if (schema.type === "object") {
    const properties: Record<string, Json> = schema.properties ?? {};
    const known = fc.record(
      Object.fromEntries(
        Object.entries(properties).map(([k, s]) => [k, valuesOf(s)]),
      ),
      { requiredKeys: schema.required ?? [] },
    );
    const extra = schema.additionalProperties === false
      ? fc.constant({})
      : fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue());
    values = fc.tuple(extra, known).map(([e, k]) => ({ ...e, ...k }));
  } else values = fc.jsonValue();
  return values.filter((v) => valid(schema, judged(schema, v)));
}

/** A request body drawn from a media type's schema: one it accepts, or one it does not. */
interface Body {
  text: string;
  valid: boolean;
}

function bodiesOf(type: string, schema: Json): fc.Arbitrary<Body> {
  const json = type.startsWith("application/json");
  const encode = (v: unknown) => json ? JSON.stringify(v) : v as string;
  const isValid = (text: string) => {
    if (!json) return valid(schema, judged(schema, text));
    try {
      return valid(schema, JSON.parse(text));
    } catch {
      return false;
    }
  };
  const { maxLength } = schema;
  const others = json
    ? fc.oneof(anyText, fc.jsonValue().map((v) => JSON.stringify(v)))
    : maxLength === undefined
    ? anyText
    : fc.oneof(
      anyText,
      // Just past the bound, where a wrong length shows.
      fc.string({ minLength: maxLength + 1, maxLength: maxLength + 2 }),
    );
  return fc.oneof(
    valuesOf(schema).map((v) => ({ text: encode(v), valid: true })),
    others.filter((t) => !isValid(t)).map((text) => ({ text, valid: false })),
  );
}

/** An operation of the document. */
interface Operation {
  path: string;
  method: string;
  op: Json;
}

/** One generated request of an operation. */
interface Generated extends Operation {
  body?: Body;
  token: "sent" | "absent" | "wrong";
  parameters: [Json, string | null][];
}

const visibleAscii = fc.string({ unit: "grapheme-ascii", maxLength: 12 })
  .map((s) => s.trim());

function requestsOf(operation: Operation): fc.Arbitrary<Generated> {
  const { op } = operation;
  const content = Object.entries(op.requestBody?.content ?? {}) as [
    string,
    Json,
  ][];
  const [type, media] = content[0] ?? [];
  return fc.record({
    body: media ? bodiesOf(type!, media.schema) : fc.constant(undefined),
    token: op.security
      ? fc.constantFrom("sent", "absent", "wrong") as fc.Arbitrary<
        Generated["token"]
      >
      : fc.constant("absent" as const),
    parameters: fc.tuple(
      ...(op.parameters ?? []).map((p: Json) =>
        fc.tuple(fc.constant(p), fc.option(visibleAscii))
      ),
    ) as fc.Arbitrary<[Json, string | null][]>,
  }).map((generated) => {
    const request = { ...operation, ...generated };
    // Counterexamples name the call, not the whole operation.
    Object.defineProperty(request, "op", { enumerable: false });
    return request;
  });
}

/** `$response.body#/a/b` read from a body. */
function evaluate(expression: string, body: Json): unknown {
  const pointer = expression.replace(/^\$response\.body#/, "");
  return pointer.split("/").slice(1).reduce((v, key) => v?.[key], body);
}

/** A header value carrying `text` as UTF-8 bytes, one character a byte. */
const utf8Bytes = (text: string) =>
  String.fromCharCode(...new TextEncoder().encode(text));

/** What a run saw, for the coverage asserted at the end. */
const seen = new Set<string>();

/** Sends `generated`, and checks the answer against the document. */
async function send(
  handler: (req: Request) => Response | Promise<Response>,
  generated: Generated,
  credential: { header: string; value: string },
): Promise<Response> {
  const { path, method, op, body, token } = generated;
  const url = new URL(`http://localhost${path}`);
  const headers = new Headers();
  for (const [parameter, value] of generated.parameters) {
    if (value === null) continue;
    if (parameter.in === "query") url.searchParams.set(parameter.name, value);
    else headers.set(parameter.name, value);
  }
  if (token !== "absent") {
    const value = token === "sent" ? credential.value : `${credential.value}0`;
    headers.set(credential.header, utf8Bytes(value));
  }
  const res = await handler(
    new Request(url, {
      method: method.toUpperCase(),
      headers,
      body: body?.text,
    }),
  );
  const what = `${method} ${path} ${
    JSON.stringify(body ?? null)
  } token ${token}: ${res.status}`;
  const described = op.responses[String(res.status)];
  assert.ok(described, `${what} is not in the document`);
  const type = res.headers.get("content-type")!;
  const media = described.content?.[type];
  assert.ok(media, `${what}: ${type} is not documented`);
  seen.add(`${method} ${path} ${res.status} ${body?.valid ?? ""}`);
  if (!type.startsWith("application/json")) {
    await res.body?.cancel();
    return res;
  }
  const answer = await res.clone().json();
  assert.ok(valid(media.schema, answer), `${what}: ${JSON.stringify(answer)}`);
  if (body?.valid) {
    // The document's promise: a body its schema accepts is never refused
    // for its content.
    const entries: Json[] = answer?.errors ?? [];
    assert.ok(
      !entries.some((e) => e.location === "body" && e.name !== "body"),
      `${what}: a valid body refused: ${JSON.stringify(answer)}`,
    );
  }
  if (body && !body.valid) {
    assert.notEqual(res.status, 200, `${what}: an invalid body accepted`);
  }
  return res;
}

Deno.test("requests generated from the document alone get the documented answers", async () => {
  const doc = await (async () => {
    const res = await createHandler()(
      new Request("http://localhost/openapi.json"),
    );
    const validator = new Validator();
    await validator.validate(await res.json());
    return validator.resolveRefs() as Json;
  })();
  const operations: Operation[] = Object.entries(doc.paths).flatMap((
    [path, item],
  ) =>
    Object.entries(item as Json).map(([method, op]) => ({ path, method, op }))
  );
  // The operation whose answer links to the calls its token authenticates.
  const register = operations.find((o) => o.op.responses[200].links)!;
  const [link] = Object.values(register.op.responses[200].links) as Json[];
  const [[parameter, expression]] = Object.entries(link.parameters) as [
    [string, string],
  ];
  const header = parameter.replace(/^header\./, "");
  const registerBody = register.op.requestBody.content;
  const [[, registerMedia]] = Object.entries(registerBody) as [[string, Json]];
  const registrations = valuesOf(registerMedia.schema) as fc.Arbitrary<
    string
  >;
  const anyRequest = fc.oneof(...operations.map(requestsOf));

  let requests = 0;
  await fc.assert(
    fc.asyncProperty(
      registrations,
      fc.array(anyRequest, { minLength: 1, maxLength: 5 }),
      async (name, generated) => {
        const stop = new AbortController();
        const handler = createHandler({ stopSignal: stop.signal });
        try {
          const registered = await handler(
            new Request(`http://localhost${register.path}`, {
              method: register.method.toUpperCase(),
              body: name,
            }),
          );
          assert.equal(registered.status, 200, name);
          const value = evaluate(expression, await registered.json());
          for (const request of generated) {
            await send(handler, request, { header, value: value as string });
            requests++;
          }
        } finally {
          stop.abort();
        }
      },
    ),
    { numRuns: 300 },
  );
  assert.ok(requests >= 300);
  // Every call was made, and every body was sent both valid and not.
  for (const { path, method, op } of operations) {
    const made = [...seen].filter((s) => s.startsWith(`${method} ${path} `));
    assert.ok(made.length > 0, `${method} ${path} never called`);
    if (op.requestBody) {
      for (const [status, validity] of [["200", "true"], ["400", "false"]]) {
        assert.ok(
          made.includes(`${method} ${path} ${status} ${validity}`),
          `${method} ${path}: never ${status} with valid=${validity}`,
        );
      }
    }
  }
});
