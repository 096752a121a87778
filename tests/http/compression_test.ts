/**
 * Compression at handler level: which encoding a client gets for its
 * `Accept-Encoding`, that the bytes decode to what identity sends, that
 * `HEAD` carries `GET`'s headers, and that event streams stay as they are.
 */

import assert from "node:assert/strict";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { createHandler } from "../../mod.ts";
import { chooseEncoding } from "../../src/http/compression.ts";

Deno.test("chooseEncoding honours q-values, refusals and the wildcard", () => {
  assert.equal(chooseEncoding(null), undefined);
  assert.equal(chooseEncoding(""), undefined);
  assert.equal(chooseEncoding("gzip, br"), "br");
  assert.equal(chooseEncoding("gzip, deflate, br, zstd"), "br");
  assert.equal(chooseEncoding("br;q=0.5, gzip"), "gzip");
  assert.equal(chooseEncoding("br;q=0, gzip;q=0.1"), "gzip");
  assert.equal(chooseEncoding("GZIP;Q=0.3"), "gzip");
  assert.equal(chooseEncoding("deflate, identity"), undefined);
  assert.equal(chooseEncoding("*"), "br");
  assert.equal(chooseEncoding("*;q=0.5, br;q=0"), "gzip");
  assert.equal(chooseEncoding("gzip;q=0, br;q=0"), undefined);
});

function decode(bytes: Uint8Array, encoding: string | null): string {
  const raw = encoding === "br"
    ? brotliDecompressSync(bytes)
    : encoding === "gzip"
    ? gunzipSync(bytes)
    : bytes;
  return new TextDecoder().decode(raw);
}

async function fetchAs(
  handler: ReturnType<typeof createHandler>,
  path: string,
  acceptEncoding?: string,
  method = "GET",
) {
  const headers: Record<string, string> = acceptEncoding === undefined
    ? {}
    : { "accept-encoding": acceptEncoding };
  const res = await handler(
    new Request(`http://localhost${path}`, { method, headers }),
  );
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { res, bytes };
}

for (const path of ["/chat", "/openapi.json"]) {
  Deno.test(`${path} is sent br, gzip or as it is, decoding to the same text`, async () => {
    const handler = createHandler();
    const plain = await fetchAs(handler, path);
    assert.equal(plain.res.headers.get("content-encoding"), null);
    assert.equal(plain.res.headers.get("vary"), "Accept-Encoding");
    const text = decode(plain.bytes, null);
    for (
      const [accept, expected] of [
        ["gzip, br", "br"],
        ["gzip", "gzip"],
        ["br;q=0.2, gzip;q=0.9", "gzip"],
        ["identity", null],
      ] as const
    ) {
      const { res, bytes } = await fetchAs(handler, path, accept);
      assert.equal(res.headers.get("content-encoding"), expected, accept);
      assert.equal(res.headers.get("vary"), "Accept-Encoding");
      assert.equal(res.headers.get("content-length"), String(bytes.length));
      assert.equal(decode(bytes, expected), text);
      if (expected !== null) assert.ok(bytes.length < plain.bytes.length / 2);
      const head = await fetchAs(handler, path, accept, "HEAD");
      assert.equal(head.bytes.length, 0);
      assert.deepEqual([...head.res.headers], [...res.headers]);
    }
  });
}

Deno.test("a JSON answer of 1 KiB or more is compressed on the fly, a smaller one is not", async () => {
  const handler = createHandler();
  const small = await fetchAs(handler, "/", "gzip, br");
  assert.equal(small.res.headers.get("content-encoding"), null);
  // Identity suits every client: a cache may serve it to any.
  assert.equal(small.res.headers.get("vary"), null);
  assert.equal(decode(small.bytes, null), "[]");
  // A registered user's messages make the list grow past 1 KiB.
  const reg = await handler(
    new Request("http://localhost/users", { method: "POST", body: "Ann" }),
  );
  const { token } = await reg.json();
  // Five long messages: GET / answers the five newest.
  for (let i = 0; i < 5; i++) {
    const res = await handler(
      new Request("http://localhost/", {
        method: "POST",
        headers: { "x-messaging-token": token },
        body: JSON.stringify({ text: `message number ${i} `.repeat(20) }),
      }),
    );
    await res.body?.cancel();
  }
  const plain = await fetchAs(handler, "/");
  assert.ok(plain.bytes.length >= 1024, String(plain.bytes.length));
  const gzip = await fetchAs(handler, "/", "gzip");
  assert.equal(gzip.res.headers.get("content-encoding"), "gzip");
  assert.equal(
    gzip.res.headers.get("content-length"),
    String(gzip.bytes.length),
  );
  assert.equal(decode(gzip.bytes, "gzip"), decode(plain.bytes, null));
  const head = await fetchAs(handler, "/", "gzip", "HEAD");
  assert.deepEqual([...head.res.headers], [...gzip.res.headers]);
});

Deno.test("an event stream is never compressed", async () => {
  const handler = createHandler();
  const stop = new AbortController();
  const res = await handler(
    new Request("http://localhost/events", {
      headers: { "accept-encoding": "gzip, br", accept: "text/event-stream" },
      signal: stop.signal,
    }),
  );
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
  assert.equal(res.headers.get("content-encoding"), null);
  stop.abort();
  await res.body?.cancel();
});
