/**
 * Compression over real sockets: the bytes the program sends for the page
 * and the OpenAPI document, with and without `Accept-Encoding`, read with
 * `node:http`, which does not decode them as `fetch` would.
 */

import assert from "node:assert/strict";
import { request } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { startServer } from "../_support/program.ts";

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Uint8Array;
}

function rawGet(
  url: string,
  headers: Record<string, string>,
  method = "GET",
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      const chunks: Uint8Array[] = [];
      res.on("data", (chunk: Uint8Array) => chunks.push(chunk));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          bytes: new Uint8Array(Buffer.concat(chunks)),
        }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

Deno.test("over the wire: the page and OpenAPI document go compressed only to clients that accept it", async () => {
  const server = await startServer(["--quiet"]);
  try {
    for (const path of ["chat", "openapi.json"]) {
      const url = `${server.url}${path}`;
      const plain = await rawGet(url, {});
      assert.equal(plain.headers["content-encoding"], undefined);
      assert.equal(plain.headers["content-length"], String(plain.bytes.length));
      const br = await rawGet(url, { "accept-encoding": "gzip, br" });
      assert.equal(br.headers["content-encoding"], "br");
      assert.equal(br.headers["vary"], "Accept-Encoding");
      assert.equal(br.headers["content-length"], String(br.bytes.length));
      assert.deepEqual(
        new Uint8Array(brotliDecompressSync(br.bytes)),
        plain.bytes,
      );
      const gzip = await rawGet(url, { "accept-encoding": "gzip" });
      assert.equal(gzip.headers["content-encoding"], "gzip");
      assert.deepEqual(new Uint8Array(gunzipSync(gzip.bytes)), plain.bytes);
      assert.ok(br.bytes.length < plain.bytes.length / 2);
      const head = await rawGet(url, { "accept-encoding": "gzip, br" }, "HEAD");
      assert.equal(head.bytes.length, 0);
      assert.equal(head.headers["content-length"], String(br.bytes.length));
      assert.equal(head.headers["content-encoding"], "br");
      console.log(
        `/${path}: identity ${plain.bytes.length} B, gzip ${gzip.bytes.length} B, br ${br.bytes.length} B`,
      );
    }
  } finally {
    assert.equal(await server.stop(), 0);
  }
});
