/**
 * Compression, which `Deno.serve` 2.9.6 lacks: fixed documents once, JSON answers as made.
 * @module
 */

import { brotliCompressSync, constants, gzipSync } from "node:zlib";

/** The encodings the service sends, best first when a client likes them equally. */
export type Encoding = "br" | "gzip";
const ENCODINGS: readonly Encoding[] = ["br", "gzip"];

/** Below this a JSON answer is sent as it is: the headers would eat the gain. */
export const MIN_COMPRESSED_BYTES = 1024;

/**
 * The encoding to send for an `Accept-Encoding` header, honouring its
 * q-values (`q=0` refuses); `undefined` means identity.
 */
export function chooseEncoding(header: string | null): Encoding | undefined {
  if (header === null) return undefined;
  const weights = new Map<string, number>();
  for (const part of header.split(",")) {
    const [name = "", ...params] = part.trim().toLowerCase().split(";");
    if (name === "") continue;
    let q = 1;
    for (const param of params) {
      const [key, value] = param.trim().split("=");
      if (key === "q") q = Number(value);
    }
    weights.set(name.trim(), Number.isFinite(q) ? q : 0);
  }
  let best: Encoding | undefined;
  let bestQ = 0;
  for (const encoding of ENCODINGS) {
    const q = weights.get(encoding) ?? weights.get("*") ?? 0;
    if (q > bestQ) [best, bestQ] = [encoding, q];
  }
  return best;
}

/** `bytes` encoded with `encoding`, at the best ratio (for bodies made once). */
export function encode(
  bytes: Uint8Array,
  encoding: Encoding,
  best = true,
): Uint8Array<ArrayBuffer> {
  const out = encoding === "br"
    ? brotliCompressSync(bytes, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: best ? 11 : 4,
        [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength,
      },
    })
    : gzipSync(bytes, { level: best ? 9 : 6 });
  return new Uint8Array(out);
}

function encoded(
  body: Uint8Array<ArrayBuffer>,
  status: number,
  headers: Headers,
  encoding: Encoding | undefined,
): Response {
  const vary = headers.get("vary");
  if (vary === null) headers.set("vary", "Accept-Encoding");
  else if (!/accept-encoding/i.test(vary)) {
    headers.set("vary", `${vary}, Accept-Encoding`);
  }
  if (encoding) headers.set("content-encoding", encoding);
  headers.set("content-length", String(body.byteLength));
  return new Response(body, { status, headers });
}

/** A fixed document, compressed once per encoding, each when first asked for. */
export function precompressed(
  body: string,
  headers: Record<string, string>,
): (req: Request) => Response {
  const identity = new TextEncoder().encode(body);
  const variants: Partial<Record<Encoding, Uint8Array<ArrayBuffer>>> = {};
  return (req) => {
    const encoding = chooseEncoding(req.headers.get("accept-encoding"));
    const sent = encoding
      ? variants[encoding] ??= encode(identity, encoding)
      : identity;
    return encoded(sent, 200, new Headers(headers), encoding);
  };
}

/** The JSON text of answers that may be large: rebuilding every answer tripled a small one's CPU. */
const largeJson = new WeakMap<Response, string>();

export function markCompressible(res: Response, text: string): Response {
  // A UTF-8 character is at most 3 bytes: shorter text is surely small.
  if (text.length * 3 >= MIN_COMPRESSED_BYTES) largeJson.set(res, text);
  return res;
}

/** Compresses `handler`'s JSON answers of at least {@linkcode MIN_COMPRESSED_BYTES}. */
export function compressJson<Rest extends unknown[]>(
  // Any handler's shape, so this module needs nothing of the router's.
  handler: (req: Request, ...rest: Rest) => Response | Promise<Response>,
): (req: Request, ...rest: Rest) => Response | Promise<Response> {
  return (req, ...rest) => {
    const encoding = chooseEncoding(req.headers.get("accept-encoding"));
    // Passed on not even awaited: Deno 2.9 sends an answer awaited here
    // chunked, without its length, when its body went unread.
    if (encoding === undefined) return handler(req, ...rest);
    return compressed(handler(req, ...rest), encoding);
  };
}

async function compressed(
  answer: Response | Promise<Response>,
  encoding: Encoding,
): Promise<Response> {
  const res = await answer;
  const text = largeJson.get(res);
  // A small answer goes without Vary: identity suits every client.
  if (text === undefined) return res;
  const bytes = new TextEncoder().encode(text);
  if (bytes.byteLength < MIN_COMPRESSED_BYTES) return res;
  await res.body?.cancel();
  const sent = encode(bytes, encoding, false);
  return encoded(sent, res.status, new Headers(res.headers), encoding);
}
