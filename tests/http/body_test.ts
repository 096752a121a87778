import assert from "node:assert/strict";
import {
  BodyTooLargeError,
  createBodyReader,
  decodeUtf8,
} from "../../src/http/body.ts";
import { HttpError } from "../../src/http/http_error.ts";
import { chunkedBody } from "../_support/call.ts";

function post(body: BodyInit, headers?: Record<string, string>): Request {
  return new Request("http://h/", { method: "POST", body, headers });
}

const reader = (maxBytes: number, timeoutMs = 10_000, signal?: AbortSignal) =>
  createBodyReader({ maxBytes, timeoutMs, signal });

/** A byte stream (as Deno's request bodies are) that sends `chunks`, then waits forever when `hang`. */
function byteStream(chunks: Uint8Array[], hang = false): ReadableStream {
  let index = 0;
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      if (index < chunks.length) controller.enqueue(chunks[index++]);
      else if (hang) return new Promise(() => {});
      else {
        controller.close();
        // A reader waiting with its own buffer must be told the stream ended.
        controller.byobRequest?.respond(0);
      }
    },
  });
}

async function rejectsWith(
  promise: Promise<unknown>,
  status: number,
  description: RegExp,
) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof HttpError, String(error));
    assert.equal(error.status, status);
    assert.match(error.errors[0].description, description);
    return true;
  });
}

Deno.test("a body within the limit is read whole: plain, chunked, byte stream, declared or not", async () => {
  assert.equal((await reader(3).bytes(post("abc"))).byteLength, 3);
  const chunked = await reader(40_000).bytes(post(chunkedBody(40_000, 1000)));
  assert.equal(chunked.byteLength, 40_000);
  assert.ok(chunked.every((b) => b === 0x61));
  for (const headers of [undefined, { "content-length": "28000" }]) {
    // Enqueueing transfers a chunk's buffer, so each stream gets its own.
    const parts = [5000, 3000, 20_000].map((n) => new Uint8Array(n).fill(0x62));
    const bytes = await reader(40_000).bytes(post(byteStream(parts), headers));
    assert.equal(bytes.byteLength, 28_000);
    assert.ok(bytes.every((b) => b === 0x62));
  }
  assert.equal(await reader(10).text(post("José")), "José");
  assert.equal(await reader(10).text(post(new Uint8Array([0xc3]))), null);
});

Deno.test("an endless body is refused at the limit instead of buffered", async () => {
  let pulled = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new Uint8Array(1024));
    },
  });
  await assert.rejects(reader(10_000).bytes(post(endless)), BodyTooLargeError);
  assert.ok(pulled <= 12, `pulled ${pulled} chunks`);
  const bytes = byteStream(
    Array.from({ length: 50 }, () => new Uint8Array(1024)),
  );
  await assert.rejects(reader(10_000).bytes(post(bytes)), BodyTooLargeError);
});

Deno.test("a declared length over the limit is refused before reading", async () => {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled++;
      controller.enqueue(new Uint8Array(10));
      controller.close();
    },
  });
  const req = post(body, { "content-length": "999999" });
  await assert.rejects(reader(100).bytes(req), BodyTooLargeError);
  assert.ok(pulled <= 1);
});

Deno.test("a body slower than the deadline is 408, whatever the stream", async () => {
  const start = performance.now();
  await rejectsWith(
    reader(100, 50).bytes(
      post(byteStream([new Uint8Array(3)], true), { "content-length": "10" }),
    ),
    408,
    /did not arrive within 0.05 s/,
  );
  const stalled = new ReadableStream({ pull: () => new Promise(() => {}) });
  await rejectsWith(reader(100, 50).bytes(post(stalled)), 408, /0.05 s/);
  assert.ok(performance.now() - start < 2000);
});

Deno.test("a body that ends before its declared length, or fails, is a 400, not a fault", async () => {
  await rejectsWith(
    reader(100).bytes(
      post(byteStream([new Uint8Array(3)]), { "content-length": "10" }),
    ),
    400,
    /cut short/,
  );
  const failing = new ReadableStream({
    pull(controller) {
      controller.error(new Error("connection reset"));
    },
  });
  await rejectsWith(reader(100).bytes(post(failing)), 400, /cut short/);
});

Deno.test("stopping the server answers every body still arriving with 503", async () => {
  const stop = new AbortController();
  const bodies = reader(100, 60_000, stop.signal);
  const waiting = [1, 2].map(() =>
    bodies.bytes(post(byteStream([new Uint8Array(1)], true)))
  );
  await new Promise((resolve) => setTimeout(resolve, 10));
  stop.abort();
  for (const read of waiting) {
    await assert.rejects(
      read,
      (e) => e instanceof HttpError && e.status === 503,
    );
  }
  await assert.rejects(
    bodies.bytes(post("late")),
    (e) => e instanceof HttpError && e.status === 503,
  );
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
