/**
 * Response builders and the bounded, strict body reader shared by both services.
 *
 * Every answer of the contract is JSON with one exact content type, so the
 * common bodies are encoded once at start-up and reused for every response.
 * @module
 */

/** The one content type every response carries. */
export const JSON_CONTENT_TYPE = "application/json; charset=UTF-8";

/** A location of an error entry: the URL (path and query) or the request body. */
export type ErrorLocation = "url" | "body";

/** One validation failure, as the contract's 400 envelope lists it. */
export interface ErrorEntry {
  /** Where the offending value was found. */
  location: ErrorLocation;
  /** The offending field. */
  name: string;
  /** A sentence a person can read. */
  description: string;
}

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder("utf-8", {
  fatal: true,
  // A byte-order mark is part of the raw text the client sent; dropping it
  // silently would let "\uFEFFHello." pass the quote's first-character check.
  ignoreBOM: true,
});

/** Encodes a value as JSON bytes once, for bodies sent many times. */
export function encodeJson(value: unknown): Uint8Array<ArrayBuffer> {
  return encoder.encode(JSON.stringify(value));
}

/** Answers `status` with a body that is already JSON text or bytes. */
export function jsonResponse(
  body: string | Uint8Array<ArrayBuffer> | null,
  status = 200,
  extraHeaders?: Record<string, string>,
): Response {
  const headers = extraHeaders
    ? { "content-type": JSON_CONTENT_TYPE, ...extraHeaders }
    : { "content-type": JSON_CONTENT_TYPE };
  return new Response(body, { status, headers });
}

/** Answers 200 with `value` serialized as JSON. */
export function ok(value: unknown): Response {
  return jsonResponse(JSON.stringify(value));
}

/** Answers with the contract's error envelope: `{"status":"error","errors":[...]}`. */
export function errorResponse(errors: ErrorEntry[], status = 400): Response {
  return jsonResponse(JSON.stringify({ status: "error", errors }), status);
}

/** The `{status, message}` bodies of the fixed-text failures, encoded once. */
const statusBodies: Record<number, Uint8Array<ArrayBuffer>> = {};
const statusMessages: Record<number, string> = {
  401: "Unauthorized",
  404: "Not Found",
  405: "Method Not Allowed",
  500: "Internal Server Error",
  503: "Service Unavailable",
};
for (const [code, message] of Object.entries(statusMessages)) {
  statusBodies[Number(code)] = encodeJson({ status: Number(code), message });
}

/** Answers `{"status": N, "message": "..."}` for 401, 404, 405, 500 or 503. */
export function statusResponse(
  status: 401 | 404 | 405 | 500 | 503,
  extraHeaders?: Record<string, string>,
): Response {
  return jsonResponse(statusBodies[status], status, extraHeaders);
}

/** Raised by {@linkcode readBytes} when a body is over the limit; answered 413. */
export class BodyTooLargeError extends Error {
  /** Builds the error for a limit of `limit` bytes. */
  constructor(readonly limit: number) {
    super(`Request body is larger than the limit of ${limit} bytes`);
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

/**
 * Wraps `fn` so that a call with the same argument as the last one returns
 * the last result: hot reads re-encode their body only when the state changed.
 */
export function lastValueCache<K, V>(fn: (key: K) => V): (key: K) => V {
  let lastKey: K | undefined;
  let lastValue: V | undefined;
  let primed = false;
  return (key) => {
    if (!primed || key !== lastKey) {
      lastValue = fn(key);
      lastKey = key;
      primed = true;
    }
    return lastValue as V;
  };
}
