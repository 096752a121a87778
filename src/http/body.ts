/**
 * The bounded, strict body reader shared by both services. It never holds
 * more than the limit, allocates for what has arrived rather than for what a
 * client declares, gives up on a body that takes too long, and turns a body
 * the client cut short into a client error.
 * @module
 */

import { Deadlines, type Wait } from "../timers/deadlines.ts";
import { entryOf, REFUSALS } from "./catalogue.ts";
import { HttpError, refusalError } from "./http_error.ts";

const strictDecoder = new TextDecoder("utf-8", {
  fatal: true,
  // A byte-order mark is part of the raw text the client sent; dropping it
  // silently would let "\uFEFFHello." pass the quote's first-character check.
  ignoreBOM: true,
});

/** Raised when a body is over the limit; answered 413. */
export class BodyTooLargeError extends HttpError {
  /** Builds the error for a limit of `limit` bytes. */
  constructor(readonly limit: number) {
    super(REFUSALS.bodyTooLarge.status, [
      entryOf(REFUSALS.bodyTooLarge, { limit }),
    ]);
    this.name = "BodyTooLargeError";
  }
}

/** How bodies are read. */
export interface BodyLimits {
  /** The largest body read, in bytes; larger ones are answered 413. */
  maxBytes: number;
  /** How long a whole body may take to arrive, in milliseconds; past it, 408. */
  timeoutMs: number;
  /** Aborted when the server stops: reads still waiting are answered 503 at once. */
  signal?: AbortSignal;
}

/** Reads bodies within {@linkcode BodyLimits}. */
export interface BodyReader {
  /** The body's bytes. */
  bytes(req: Request): Promise<Uint8Array>;
  /** The body as text, or `null` when it is not valid UTF-8. */
  text(req: Request): Promise<string | null>;
}

/**
 * A first allocation big enough for any body of this API (a name, a quote,
 * a message) and small enough that thousands of stalled clients cost little:
 * Deno's own reader sizes its buffer to the declared `Content-Length`, so a
 * client that declares 64 KiB and sends one byte would hold all of it
 * ([body_reader.md](../../bench/results/profiles/body_reader.md)).
 */
const FIRST_READ_BYTES = 4096;
/**
 * The least room a read of a chunked body may offer. Deno 2.9's HTTP/1
 * server decodes the chunk framing only within the room the reader gives
 * it: room too small for the next chunk-size line (with a byte of data) or
 * for the final `0\r\n\r\n` is never filled, although every byte has
 * arrived, and the read waits for the deadline. Deno refuses chunk-size
 * lines over 4,096 bytes, so twice that holds any it accepts, and a trailer
 * section of up to 8 KB
 * ([chunked_body_hang.md](../../bench/results/profiles/chunked_body_hang.md)).
 */
const CHUNKED_ROOM_BYTES = 8192;
const EMPTY = new Uint8Array(0);

/** Ends a read with `error`, once it is no longer waited for. */
type EndRead = (error: HttpError) => void;

/**
 * The body length `req` declares: -1 when it declares none that is usable,
 * `undefined` when it is over `maxBytes`.
 */
function declaredLength(req: Request, maxBytes: number): number | undefined {
  const declared = req.headers.get("content-length");
  if (declared === null) return -1;
  const length = Number(declared);
  if (length > maxBytes) return undefined;
  return Number.isSafeInteger(length) && length >= 0 ? length : -1;
}

/** Builds a reader that applies `limits` to every body it reads. */
export function createBodyReader(limits: BodyLimits): BodyReader {
  const { maxBytes, timeoutMs, signal } = limits;
  // Reads in progress, so one timer and one stop listener serve them all.
  const reading = new Deadlines<EndRead>(
    timeoutMs,
    (end) =>
      end(refusalError(REFUSALS.bodyTimeout, { seconds: timeoutMs / 1000 })),
  );
  signal?.addEventListener("abort", () => {
    const stopping = new HttpError(503);
    for (const end of reading.clear()) end(stopping);
  }, { once: true });

  // Not async: one promise per body, the one the caller awaits, settled
  // with what `finish` makes of the bytes (text is decoded in the same step).
  function readBody<T>(
    req: Request,
    finish: (bytes: Uint8Array) => T,
  ): Promise<T> {
    const expected = declaredLength(req, maxBytes);
    // The body is left unread: cancelling a request body in Deno 2.9
    // keeps memory the connection never gives back.
    if (expected === undefined) {
      return Promise.reject(new BodyTooLargeError(maxBytes));
    }
    if (expected === 0) return Promise.resolve(finish(EMPTY));
    // A small declared body is read by Deno's own reader, which takes a body
    // that has already arrived in one step, provided `req.body` was never
    // touched; it sizes its buffer to the declared length, which is no more
    // than the first read of `readAll`.
    const small = expected > 0 && expected <= FIRST_READ_BYTES;
    const body = small ? undefined : req.body;
    if (body === null) return Promise.resolve(finish(EMPTY));
    if (signal?.aborted) return Promise.reject(new HttpError(503));

    return new Promise((resolve, reject) => {
      let read: Promise<Uint8Array>;
      let wait: Wait<EndRead>;
      if (body === undefined) {
        read = req.bytes();
        // Deno's own read has nothing to release: ending is rejecting.
        wait = reading.add(reject);
      } else {
        let giveUp = () => {};
        read = readAll(body, expected, maxBytes, (release) => giveUp = release);
        wait = reading.add((error) => {
          giveUp();
          reject(error);
        });
      }
      read.then((result) => {
        if (!reading.delete(wait)) return;
        // Deno's HTTP framing holds a body to its declared length; a
        // Request built in code does not.
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

/**
 * Reads the whole stream: into one growing buffer when the stream lets the
 * reader supply it (Deno's request bodies do), else chunk by chunk.
 *
 * Giving up on a body releases the reader rather than cancelling the
 * stream: Deno 2.9 keeps memory for good for each request body cancelled
 * before it fully arrived, while released readers level off
 * ([body_reader.md](../../bench/results/profiles/body_reader.md)).
 */
async function readAll(
  body: ReadableStream<Uint8Array>,
  expected: number,
  maxBytes: number,
  onGiveUp: (release: () => void) => void,
): Promise<Uint8Array> {
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    // Bodies built from strings and most streams are not byte streams.
  }
  if (byob === undefined) {
    const reader = body.getReader();
    onGiveUp(() => reader.releaseLock());
    return await readChunks(reader, expected, maxBytes);
  }
  const reader = byob;
  onGiveUp(() => reader.releaseLock());
  // A declared body is framed by its length alone, so any room will do and
  // the buffer ends at that length. A chunked one always gets room for its
  // framing, even past the limit, so that its end can be seen.
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
  if (expected >= 0 && filled < expected) throw new Error("cut short");
  if (filled > maxBytes) throw new BodyTooLargeError(maxBytes);
  if (filled === capacity) {
    // A declared body read to its length has not yet said it is done, and
    // until it does Deno holds the connection open, even one the client
    // asked to close. Its framing admits no byte more.
    await reader.read(new Uint8Array(1));
  }
  return new Uint8Array(buffer, 0, filled);
}

async function readChunks(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  expected: number,
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
  if (expected >= 0 && total < expected) throw new Error("cut short");
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

/**
 * Below this many bytes, text that is all ASCII is decoded in JavaScript:
 * a call to Deno's decoder has a fixed cost, more than checking and
 * converting a name, a quote or a short message byte by byte; past it the
 * decoder is cheaper
 * ([post_cpu.md](../../bench/results/profiles/post_cpu.md)).
 */
const ASCII_IN_JS_BYTES = 64;

/** Decodes bytes as UTF-8, returning `null` when they are not valid UTF-8. */
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
