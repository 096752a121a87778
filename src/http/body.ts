/**
 * The bounded body reader: never holds more than the limit, allocates for what has arrived,
 * and times out (docs/architecture.md, "The body reader").
 * @module
 */

import { Deadlines } from "../timers/deadlines.ts";
import { entryOf, REFUSALS } from "./catalogue.ts";
import { HttpError, refusalError } from "./http_error.ts";

const strictDecoder = new TextDecoder("utf-8", {
  fatal: true,
  // A dropped BOM would let "\uFEFFHello." pass the quote's first-character check.
  ignoreBOM: true,
});

export class BodyTooLargeError extends HttpError {
  constructor(readonly limit: number) {
    super(REFUSALS.bodyTooLarge.status, [
      entryOf(REFUSALS.bodyTooLarge, { limit }),
    ]);
    this.name = "BodyTooLargeError";
  }
}

export interface BodyLimits {
  maxBytes: number;
  timeoutMs: number;
  /** Aborted when the server stops: waiting reads are answered 503. */
  signal?: AbortSignal;
}

export interface BodyReader {
  bytes(req: Request): Promise<Uint8Array>;
  /** `null` when not valid UTF-8. */
  text(req: Request): Promise<string | null>;
}

/** Not the declared length: 64 KiB declared and one byte sent would hold it all (bench/results/profiles/body_reader.md). */
const FIRST_READ_BYTES = 4096;
/** Deno 2.9 decodes chunk framing only within a read's room; 8 KiB holds any chunk-size line (chunked_body_hang.md). */
const CHUNKED_ROOM_BYTES = 8192;
const EMPTY = new Uint8Array(0);

type EndRead = (error: HttpError) => void;

/** -1: none usable; `undefined`: over `maxBytes`. */
function declaredLength(req: Request, maxBytes: number): number | undefined {
  const declared = req.headers.get("content-length");
  if (declared === null) return -1;
  const length = Number(declared);
  if (length > maxBytes) return undefined;
  return Number.isSafeInteger(length) && length >= 0 ? length : -1;
}

export function createBodyReader(limits: BodyLimits): BodyReader {
  const { maxBytes, timeoutMs, signal } = limits;
  // One timer and one stop listener serve every read in progress.
  const reading = new Deadlines<EndRead>(
    timeoutMs,
    (end) =>
      end(refusalError(REFUSALS.bodyTimeout, { seconds: timeoutMs / 1000 })),
  );
  signal?.addEventListener("abort", () => {
    const stopping = new HttpError(503);
    for (const end of reading.clear()) end(stopping);
  }, { once: true });

  // Not async: one promise per body, the one the caller awaits.
  function readBody<T>(
    req: Request,
    finish: (bytes: Uint8Array) => T,
  ): Promise<T> {
    const expected = declaredLength(req, maxBytes);
    // Left unread: cancelling a request body in Deno 2.9 keeps memory for good.
    if (expected === undefined) {
      return Promise.reject(new BodyTooLargeError(maxBytes));
    }
    if (expected === 0) return Promise.resolve(finish(EMPTY));
    // Deno's own reader takes an arrived small body in one step, if `req.body` was never touched.
    const small = expected > 0 && expected <= FIRST_READ_BYTES;
    const body = small ? undefined : req.body;
    if (body === null) return Promise.resolve(finish(EMPTY));
    if (signal?.aborted) return Promise.reject(new HttpError(503));

    return new Promise((resolve, reject) => {
      let giveUp = () => {};
      const read = body === undefined
        ? req.bytes()
        : readAll(body, expected, maxBytes, (release) => giveUp = release);
      const wait = reading.add((error) => {
        giveUp();
        reject(error);
      });
      read.then((result) => {
        if (!reading.delete(wait)) return;
        // A Request built in code is not held to its declared length.
        if (result.byteLength > maxBytes) {
          reject(new BodyTooLargeError(maxBytes));
        } else if (expected >= 0 && result.byteLength < expected) {
          reject(refusalError(REFUSALS.bodyCutShort));
        } else resolve(finish(result));
      }, (error) => {
        if (!reading.delete(wait)) return;
        reject(
          error instanceof HttpError
            ? error
            : refusalError(REFUSALS.bodyCutShort),
        );
      });
    });
  }

  return {
    bytes: (req) => readBody(req, (bytes) => bytes),
    text: (req) => readBody(req, decodeUtf8),
  };
}

/** Gives up by releasing the reader, not cancelling: Deno 2.9 leaks per cancelled body (body_reader.md). */
async function readAll(
  body: ReadableStream<Uint8Array>,
  expected: number,
  maxBytes: number,
  onGiveUp: (release: () => void) => void,
): Promise<Uint8Array> {
  let reader:
    | ReadableStreamBYOBReader
    | ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = body.getReader({ mode: "byob" });
  } catch {
    reader = body.getReader();
  }
  onGiveUp(() => reader.releaseLock());
  if (reader instanceof ReadableStreamDefaultReader) {
    // Not a byte stream: read chunk by chunk.
    return await readChunks(reader, maxBytes);
  }
  // A chunked body always gets room for its framing, even past the limit, so its end is seen.
  const room = expected >= 0 ? 1 : CHUNKED_ROOM_BYTES;
  const capacity = expected >= 0 ? expected : maxBytes + room;
  let buffer = new ArrayBuffer(
    Math.min(capacity, Math.max(FIRST_READ_BYTES, room)),
  );
  let filled = 0;
  for (;;) {
    if (buffer.byteLength - filled < room) {
      if (filled >= capacity) break;
      const grown = new ArrayBuffer(
        Math.min(capacity, Math.max(filled * 2, filled + room)),
      );
      new Uint8Array(grown).set(new Uint8Array(buffer, 0, filled));
      buffer = grown;
    }
    const { done, value } = await reader.read(
      new Uint8Array(buffer, filled, buffer.byteLength - filled),
    );
    if (value) {
      buffer = value.buffer;
      filled += value.byteLength;
    }
    if (done) break;
    if (filled > maxBytes) throw new BodyTooLargeError(maxBytes);
  }
  if (filled > maxBytes) throw new BodyTooLargeError(maxBytes);
  if (filled === capacity) {
    // Until the reader sees the end, Deno holds the connection open, even one asked to close.
    // A client that half-closes after its body makes this read fail (Deno 2.9); the body is whole.
    await reader.read(new Uint8Array(1)).catch(() => {});
  }
  return new Uint8Array(buffer, 0, filled);
}

async function readChunks(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  maxBytes: number,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) throw new BodyTooLargeError(maxBytes);
    chunks.push(value);
  }
  const [first, ...more] = chunks;
  if (first !== undefined && more.length === 0) return first;
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** Below this, ASCII is decoded in JavaScript: cheaper than a call to Deno's decoder (post_cpu.md). */
const ASCII_IN_JS_BYTES = 64;

/** `null` when not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  if (bytes.length <= ASCII_IN_JS_BYTES) {
    let ascii = true;
    for (const byte of bytes) {
      if (byte > 0x7f) {
        ascii = false;
        break;
      }
    }
    if (ascii) {
      return String.fromCharCode.apply(null, bytes as unknown as number[]);
    }
  }
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return null;
  }
}
