import assert from "node:assert/strict";
import {
  BodyTooLargeError,
  decodeUtf8,
  readBytes,
} from "../../src/http/body.ts";
import { chunkedBody } from "../_support/call.ts";

function post(body: BodyInit, headers?: Record<string, string>): Request {
  return new Request("http://h/", { method: "POST", body, headers });
}

Deno.test("readBytes returns a body within the limit, chunked or not", async () => {
  assert.equal((await readBytes(post("abc"), 3)).byteLength, 3);
  const chunked = await readBytes(post(chunkedBody(40_000, 1000)), 40_000);
  assert.equal(chunked.byteLength, 40_000);
  assert.ok(chunked.every((b) => b === 0x61));
});

Deno.test("readBytes stops at the limit of an endless body instead of buffering it", async () => {
  let pulled = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new Uint8Array(1024));
    },
  });
  await assert.rejects(readBytes(post(endless), 10_000), BodyTooLargeError);
  assert.ok(pulled <= 12, `pulled ${pulled} chunks`);
});

Deno.test("readBytes refuses a declared length over the limit before reading", async () => {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new Uint8Array(10));
      controller.close();
    },
  });
  const req = post(body, { "content-length": "999999" });
  await assert.rejects(readBytes(req, 100), BodyTooLargeError);
  assert.ok(pulled <= 1);
});

Deno.test("decodeUtf8 is strict and keeps a byte-order mark", () => {
  assert.equal(decodeUtf8(new TextEncoder().encode("José")), "José");
  assert.equal(decodeUtf8(new Uint8Array([0xc3, 0x28])), null);
  assert.equal(
    decodeUtf8(new Uint8Array([0xed, 0xa0, 0x80])),
    null,
    "lone surrogate",
  );
  assert.equal(decodeUtf8(new Uint8Array([0xef, 0xbb, 0xbf, 0x41])), "\uFEFFA");
});
