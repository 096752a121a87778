import assert from "node:assert/strict";
import { bufferedSink, requestLogger } from "../../src/http/request_log.ts";
import { createHandler } from "../../src/program/app.ts";

function collecting(options: { maxBytes?: number; delayMs?: number } = {}) {
  const writes: string[] = [];
  const sink = bufferedSink({
    ...options,
    out: (bytes) => writes.push(new TextDecoder().decode(bytes)),
  });
  return { sink, writes };
}

Deno.test("lines are written together, in order, once the delay has passed", async () => {
  const { sink, writes } = collecting({ delayMs: 20 });
  for (let i = 0; i < 100; i++) sink.write(`line ${i}`);
  assert.equal(writes.length, 0, "nothing is written on the request path");
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(writes.length, 1, "one write for the batch");
  assert.deepEqual(
    writes[0]?.split("\n"),
    [...Array.from({ length: 100 }, (_, i) => `line ${i}`), ""],
  );
});

Deno.test("a full batch is written at once, far fewer writes than lines; flush writes the rest", () => {
  const maxBytes = 400;
  const { sink, writes } = collecting({ maxBytes, delayMs: 60_000 });
  // 21 bytes a line, which does not divide the batch: a sink that let a
  // batch run past maxBytes would show it.
  const lines = Array.from(
    { length: 2000 },
    (_, i) => `line ${String(i).padStart(15, "0")}`,
  );
  for (const line of lines) sink.write(line);
  const total = lines.length * 21;
  assert.ok(writes.length > 0, "full batches go out without waiting");
  assert.ok(writes.length <= total / (maxBytes / 2), `${writes.length} writes`);
  for (const batch of writes) assert.ok(batch.length <= maxBytes);
  sink.flush();
  assert.equal(writes.join(""), lines.map((line) => `${line}\n`).join(""));
  const count = writes.length;
  sink.flush();
  assert.equal(writes.length, count, "an empty flush writes nothing");
  sink.write("tail");
  sink.flush();
  assert.equal(writes.at(-1), "tail\n");
});

Deno.test("any text, any line length: whole lines in order, and a write over maxBytes only for lines too long for a batch", () => {
  const maxBytes = 256;
  const { sink, writes } = collecting({ maxBytes, delayMs: 60_000 });
  // Every 25th line is long (100 to 298 characters); the others are short
  // (at most 20 UTF-16 units) and mostly not ASCII: up to 3 bytes a unit.
  const lines = Array.from(
    { length: 300 },
    (_, i) =>
      i % 25 === 0
        ? `${i} ${"-".repeat(100 + (i * 37) % 196)}`
        : `${i} ${"ü€😀".repeat(i % 5)}`,
  );
  for (const line of lines) sink.write(line);
  sink.flush();
  for (const batch of writes) {
    assert.ok(batch.endsWith("\n"));
    const size = new TextEncoder().encode(batch).length;
    const long = batch.split("\n").some((line) => line.length > 20);
    assert.ok(size <= maxBytes || long, `${size} bytes of short lines`);
  }
  assert.equal(writes.join(""), lines.map((line) => `${line}\n`).join(""));
});

Deno.test("the request log, as createHandler's onResponse, logs method, path without query, status and time, never the token or the body", async () => {
  const { sink, writes } = collecting();
  const handler = createHandler({ onResponse: requestLogger(sink) });
  const secret = `a-${"f".repeat(40)}`;
  await handler(
    new Request("http://h/users?secret=1", {
      headers: { "x-messaging-token": secret },
    }),
  );
  await handler(
    new Request("http://h/quote", { method: "POST", body: "Quiet, please." }),
  );
  sink.flush();
  const [first = "", second = "", ...rest] = writes.join("").split("\n");
  assert.match(
    first,
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z GET \/users 401 \d+\.\d\dms$/,
  );
  assert.match(second, /Z POST \/quote 200 \d+\.\d\dms$/);
  assert.deepEqual(rest, [""]);
  assert.ok(!writes.join("").includes("f".repeat(40)));
  assert.ok(!writes.join("").includes("Quiet"));
});

Deno.test("in JSON, each answer is one object with the client the handler was told of", async () => {
  const { sink, writes } = collecting();
  const handler = createHandler({
    onResponse: requestLogger(sink, { format: "json" }),
  });
  await handler(new Request("http://h/nowhere?x=1"), {
    remoteAddr: { transport: "tcp", hostname: "192.0.2.9", port: 4000 },
  });
  sink.flush();
  const entry = JSON.parse(writes.join(""));
  // Fields in order; the time and duration vary, so only their types.
  assert.deepEqual(
    Object.entries(entry).map(([key, value]) =>
      key === "time" || key === "ms" ? [key, typeof value] : [key, value]
    ),
    [
      ["time", "string"],
      ["method", "GET"],
      ["route", "/nowhere"],
      ["status", 404],
      ["ms", "number"],
      ["client", "192.0.2.9"],
    ],
  );
});

Deno.test("once stopSignal is aborted, new requests are answered 503 with Connection: close and Retry-After, and still logged", async () => {
  const { sink, writes } = collecting();
  const stop = new AbortController();
  const handler = createHandler({
    stopSignal: stop.signal,
    onResponse: requestLogger(sink),
  });
  assert.equal((await handler(new Request("http://h/quote"))).status, 200);
  stop.abort();
  const refused = await handler(new Request("http://h/quote"));
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get("connection"), "close");
  assert.equal(refused.headers.get("retry-after"), "1");
  assert.deepEqual(await refused.json(), {
    status: 503,
    message: "Service Unavailable",
  });
  sink.flush();
  assert.match(writes.join(""), /Z GET \/quote 503 \d+\.\d\dms\n$/);
});

Deno.test("a token put in a path is not logged, wherever it stands and in either format; a long path is cut", async () => {
  const fc = (await import("fast-check")).default;
  const hex = fc.stringMatching(/^[0-9a-f]{40}$/);
  const segment = fc.stringMatching(/^[a-z0-9_~-]{0,12}$/);
  await fc.assert(
    fc.asyncProperty(
      hex,
      segment,
      segment,
      fc.constantFrom<"text" | "json">("text", "json"),
      async (digits, before, after, format) => {
        const { sink, writes } = collecting();
        const handler = createHandler({
          onResponse: requestLogger(sink, { format }),
        });
        const path = `/${before}/ann-${digits}${after}`;
        const res = await handler(new Request(`http://h${path}`));
        assert.equal(res.status, 404);
        sink.flush();
        const line = writes.join("");
        assert.ok(!line.includes(digits), line);
        assert.ok(line.includes(`/${before}/ann-`), "the rest of the path");
      },
    ),
    { numRuns: 200 },
  );
  const { sink, writes } = collecting();
  const handler = createHandler({ onResponse: requestLogger(sink) });
  await handler(new Request(`http://h/${"x".repeat(60_000)}`));
  sink.flush();
  assert.ok(writes.join("").length < 300, "a 60,000-character path is cut");
});

Deno.test("a token percent-encoded in part or whole, or given as the method, is not logged either", async () => {
  const fc = (await import("fast-check")).default;
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.tuple(fc.constantFrom(..."0123456789abcdef"), fc.nat(2)), {
        minLength: 40,
        maxLength: 40,
      }),
      fc.constantFrom<"text" | "json">("text", "json"),
      async (units, format) => {
        const digits = units.map(([c]) => c).join("");
        // Each digit as itself, or escaped in lower or upper case.
        const spelt = units.map(([c, how]) => {
          const hex = c.charCodeAt(0).toString(16);
          return how === 0 ? c : `%${how === 1 ? hex : hex.toUpperCase()}`;
        }).join("");
        const { sink, writes } = collecting();
        const handler = createHandler({
          onResponse: requestLogger(sink, { format }),
        });
        await handler(new Request(`http://h/x/ann-${spelt}`));
        await handler(new Request("http://h/", { method: `ANN-${digits}` }));
        sink.flush();
        const log = decodeURIComponent(writes.join(""));
        assert.ok(!log.includes(digits), log);
        assert.equal(log.split("\n").length, 3, "two lines");
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("characters that would forge or reorder a line are shown escaped, as Deno hands the path over unencoded", () => {
  for (const format of ["text", "json"] as const) {
    const { sink, writes } = collecting();
    const log = requestLogger(sink, { format });
    // Deno's server gives the path's UTF-8 as it came, not percent-encoded.
    const req = {
      method: "GET",
      url: "http://h/x/\u2028y\u0085z\u202egnp.exe",
      headers: new Headers(),
    } as unknown as Request;
    log(req, new Response(null, { status: 404 }), 1);
    sink.flush();
    const line = writes.join("");
    assert.doesNotMatch(line, /[\u2028\u0085\u202e]/u, format);
    const route = format === "json" ? JSON.parse(line).route : line;
    assert.match(route, /\/x\/\\u2028y\\u0085z\\u202egnp\.exe/, line);
  }
});
