/**
 * The bounded, strict body reader shared by both services: it never buffers
 * more than the limit, and text is decoded as UTF-8 or refused.
 * @module
 */

import { HttpError } from "./http_error.ts";

const strictDecoder = new TextDecoder("utf-8", {
  fatal: true,
  // A byte-order mark is part of the raw text the client sent; dropping it
  // silently would let "\uFEFFHello." pass the quote's first-character check.
  ignoreBOM: true,
});

/** Raised by {@linkcode readBytes} when a body is over the limit; answered 413. */
export class BodyTooLargeError extends HttpError {
  /** Builds the error for a limit of `limit` bytes. */
  constructor(readonly limit: number) {
    super(413, [{
      location: "body",
      name: "body",
      description: `Request body is larger than the limit of ${limit} bytes`,
    }]);
    this.name = "BodyTooLargeError";
  }
}

/**
 * Reads at most `limit` bytes of the request body.
 *
 * A declared `Content-Length` over the limit is refused before anything is
 * read; with a declared length within it, the HTTP layer itself guarantees
 * no more arrives, so the fast whole-body read is safe. A chunked body is
 * read chunk by chunk and abandoned the moment it passes the limit.
 */
export async function readBytes(
  req: Request,
  limit: number,
): Promise<Uint8Array> {
  const declared = req.headers.get("content-length");
  if (declared !== null) {
    const length = Number(declared);
    if (length > limit) {
      await req.body?.cancel();
      throw new BodyTooLargeError(limit);
    }
    if (Number.isSafeInteger(length) && length >= 0) {
      const bytes = await req.bytes();
      if (bytes.byteLength > limit) throw new BodyTooLargeError(limit);
      return bytes;
    }
  }
  if (req.body === null) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw new BodyTooLargeError(limit);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** Decodes bytes as UTF-8, returning `null` when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return null;
  }
}

/** Reads the body within `limit` and decodes it strictly; `null` when it is not valid UTF-8. */
export async function readText(
  req: Request,
  limit: number,
): Promise<string | null> {
  return decodeUtf8(await readBytes(req, limit));
}
