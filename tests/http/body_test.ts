import assert from "node:assert/strict";
import {
  BodyTooLargeError,
  createBodyReader,
  decodeUtf8,
} from "../../src/http/body.ts";
import { HttpError } from "../../src/http/http_error.ts";
import fc from "fast-check";
import { chunkedBody } from "../_support/call.ts";
import { itemAt } from "../_support/item_at.ts";

function post(body: BodyInit, headers?: Record<string, string>): Request {
  return new Request("http://h/", { method: "POST", body, headers });
}

const reader = (maxBytes: number, timeoutMs = 10_000, signal?: AbortSignal) =>
  createBodyReader({ maxBytes, timeoutMs, signal });

/** A byte stream (as Deno's request bodies are) that sends `chunks`, then waits forever when `hang`. */
function byteStream(chunks: Uint8Array[], hang = false): ReadableStream {
  const rest = chunks.values();
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      const next = rest.next();
      if (!next.done) controller.enqueue(next.value);
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
    assert.match(itemAt(error.errors, 0).description, description);
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

Deno.test("decodeUtf8 answers what a strict decoder does, for any bytes of any length", () => {
  const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  const reference = (bytes: Uint8Array) => {
    try {
      return strict.decode(bytes);
    } catch {
      return null;
    }
  };
  // Mostly ASCII, so that short all-ASCII inputs (decoded in JavaScript)
  // and inputs with one stray byte at any place are both common.
  const byte = fc.oneof(
    { arbitrary: fc.integer({ min: 0, max: 0x7f }), weight: 8 },
    { arbitrary: fc.integer({ min: 0x80, max: 0xff }), weight: 1 },
  );
  fc.assert(
    fc.property(
      fc.array(byte, { maxLength: 200 }),
      (values) => {
        const bytes = Uint8Array.from(values);
        assert.equal(decodeUtf8(bytes), reference(bytes));
      },
    ),
    { numRuns: 2000 },
  );
  for (
    const text of ["", "A", "x".repeat(64), "x".repeat(65), "é".repeat(40)]
  ) {
    assert.equal(decodeUtf8(new TextEncoder().encode(text)), text);
  }
});

// ---- properties over chunkings ----

/** A body of `size` bytes whose every byte tells its place, so a byte read twice, dropped or moved shows. */
const patterned = (size: number) =>
  Uint8Array.from({ length: size }, (_, i) => (i * 31 + (i >> 8)) & 0xff);

/** Cuts `bytes` into pieces whose sizes cycle through `pattern`; the last piece takes what is left after 200. */
function cut(bytes: Uint8Array, pattern: number[]): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  let offset = 0;
  for (let i = 0; offset < bytes.length; i++) {
    const n = i < 200
      ? pattern[i % pattern.length] ?? 1
      : bytes.length - offset;
    pieces.push(bytes.slice(offset, offset + n));
    offset += n;
  }
  return pieces;
}

/**
 * A chunked request body as Deno 2.9's HTTP/1 server hands it over: a byte
 * stream that decodes the chunk framing only within the view each read
 * offers. A view too small for the framing at hand (a chunk-size line and one
 * byte of data, the CRLF after the data, the final `0\r\n\r\n`) never fills
 * in Deno, even though every byte has arrived
 * (bench/results/profiles/chunked_body_hang.md); here it fails at once,
 * naming the view, so a property fails fast instead of at the deadline.
 */
function denoChunkedBody(pieces: Uint8Array[]): ReadableStream<Uint8Array> {
  let piece = 0;
  let offset = 0;
  let state: "head" | "data" | "crlf" | "end" = pieces.length ? "head" : "end";
  return new ReadableStream({
    type: "bytes",
    // Deno's own reader offers 64 KiB views.
    autoAllocateChunkSize: 65_536,
    pull(controller) {
      const request = controller.byobRequest!;
      const view = request.view as Uint8Array;
      const stall = (what: string, bytes: number) =>
        controller.error(
          new Error(
            `a view of ${view.byteLength} bytes cannot hold ${what} (${bytes} bytes)`,
          ),
        );
      for (;;) {
        if (state === "crlf") {
          if (view.byteLength < 2) return stall("the CRLF after a chunk", 2);
          piece++;
          offset = 0;
          state = piece < pieces.length ? "head" : "end";
          continue;
        }
        if (state === "end") {
          if (view.byteLength < 5) return stall("the last chunk", 5);
          controller.close();
          return request.respond(0);
        }
        const data = pieces[piece];
        if (data === undefined) throw new Error("no chunk left to send");
        const head = state === "head" ? data.length.toString(16).length + 2 : 0;
        if (view.byteLength < head + 1) {
          return stall("a chunk-size line and a byte", head + 1);
        }
        const n = Math.min(data.length - offset, view.byteLength - head);
        view.set(data.subarray(offset, offset + n));
        offset += n;
        state = offset < data.length ? "data" : "crlf";
        return request.respond(n);
      }
    },
  });
}

/** Sizes of every kind: anything up to past the limit, and 2^k - 4 ... 2^k + 4. */
const sizeArb = (limit: number) =>
  fc.oneof(
    fc.integer({ min: 0, max: limit + 1 }),
    fc.tuple(fc.integer({ min: 0, max: 17 }), fc.integer({ min: -4, max: 4 }))
      .map(([k, d]) => Math.max(0, 2 ** k + d)),
    fc.integer({ min: -4, max: 1 }).map((d) => Math.max(0, limit + d)),
  );
const limitArb = fc.oneof(
  fc.constant(65_536),
  fc.integer({ min: 1, max: 70_000 }),
);
const patternArb = fc.array(
  fc.oneof(
    fc.constant(1),
    fc.integer({ min: 1, max: 64 }),
    fc.integer({ min: 1, max: 70_000 }),
  ),
  { minLength: 1, maxLength: 12 },
);
const caseArb = limitArb.chain((limit) =>
  fc.record({
    limit: fc.constant(limit),
    size: sizeArb(limit),
    pattern: patternArb,
  })
);

/** Reads `body` under `limit` and checks the answer: the exact bytes up to the limit, 413 past it. */
async function readsExactly(
  limit: number,
  bytes: Uint8Array,
  req: Request,
): Promise<void> {
  const read = reader(limit).bytes(req);
  if (bytes.length > limit) {
    await assert.rejects(read, BodyTooLargeError);
  } else {
    assert.deepEqual(await read, bytes);
  }
}

Deno.test("a chunked body of any size and any split is read whole, as Deno's server frames it", async () => {
  await fc.assert(
    fc.asyncProperty(caseArb, async ({ limit, size, pattern }) => {
      const bytes = patterned(size);
      await readsExactly(
        limit,
        bytes,
        post(denoChunkedBody(cut(bytes, pattern))),
      );
    }),
    { numRuns: 300 },
  );
});

Deno.test("a body of any size and any split is read whole from any stream, declared or not", async () => {
  const streams = {
    bytes: (pieces: Uint8Array[]) => byteStream(pieces),
    plain: (pieces: Uint8Array[]) =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const piece of pieces) controller.enqueue(piece);
          controller.close();
        },
      }),
  };
  await fc.assert(
    fc.asyncProperty(
      caseArb,
      fc.constantFrom("bytes" as const, "plain" as const),
      fc.boolean(),
      async ({ limit, size, pattern }, kind, declared) => {
        const bytes = patterned(size);
        const headers = declared
          ? { "content-length": String(size) }
          : undefined;
        await readsExactly(
          limit,
          bytes,
          post(streams[kind](cut(bytes, pattern)), headers),
        );
      },
    ),
    { numRuns: 300 },
  );
});

Deno.test("a body that ends before its declared length is a 400 whatever its split", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 20_000 }),
      fc.integer({ min: 1, max: 5000 }),
      patternArb,
      async (size, missing, pattern) => {
        const bytes = patterned(size);
        await rejectsWith(
          reader(65_536).bytes(
            post(byteStream(cut(bytes, pattern)), {
              "content-length": String(size + missing),
            }),
          ),
          400,
          /cut short/,
        );
      },
    ),
    { numRuns: 100 },
  );
});
