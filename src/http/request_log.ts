/**
 * The request log: one line per request on standard error, gathered and
 * written in batches off the request path.
 * @module
 */

import { type ClientAddressOf, clientAddressOf } from "./client_address.ts";
import { requestPath } from "./request_path.ts";
import type { ResponseObserver } from "./observe_responses.ts";

/** How log lines are written: as text, or one JSON object per line. */
export type LogFormat = "text" | "json";

/** Options of {@linkcode requestLogger}. */
export interface RequestLogOptions {
  /** `text` (the default): `TIME METHOD PATH STATUS MSms`; `json`: an object with `time`, `method`, `route`, `status`, `ms` and `client`. */
  format?: LogFormat;
  /** Who the client is, for the JSON lines. Default: the connection's address. */
  clientOf?: ClientAddressOf;
}

/** Where log lines go. */
export interface LogSink {
  /** Takes one line (without its newline). */
  write(line: string): void;
  /** Writes out every line taken so far, before this returns. */
  flush(): void;
}

/** Options of {@linkcode bufferedSink}. */
export interface BufferedSinkOptions {
  /** Writes the bytes out whole before it returns: the sink reuses them. Default: standard error. */
  out?: (bytes: Uint8Array) => void;
  /**
   * The size of a batch: no write is larger, except lines arriving together
   * that might not fit an empty batch, which go out on their own. Default
   * 64 KiB.
   */
  maxBytes?: number;
  /** The longest a line waits to be written, in milliseconds. Default 50. */
  delayMs?: number;
}

const encoder = new TextEncoder();

function writeAll(bytes: Uint8Array): void {
  let written = 0;
  // Each pass writes at least one byte or throws, so this ends.
  while (written < bytes.length) {
    written += Deno.stderr.writeSync(bytes.subarray(written));
  }
}

/**
 * A sink that writes its lines in batches: one write per `delayMs` (or per
 * `maxBytes`) instead of one per line, which doubled the CPU of a
 * `GET /quote` (see `bench/results/profiles/request_log.md`). It writes what it
 * holds when the process ends, `Deno.exit` included (both fire `unload`);
 * `serve.ts` also flushes when `deno serve` stops it.
 *
 * The batch waits as bytes, not as text. Lines kept as one string until
 * the batch was written outlived V8's young collections, and so many
 * survivors made V8 grow its young generation, and RSS with it. So lines
 * are joined in a short string (one encoding per kilobyte, not one per
 * line, which cost more) that is encoded into the batch before it can age
 * (see `bench/results/profiles/request_log.md`).
 */
export function bufferedSink(options: BufferedSinkOptions = {}): LogSink {
  const out = options.out ?? writeAll;
  const maxBytes = options.maxBytes ?? 65536;
  const delayMs = options.delayMs ?? 50;
  const encodeAt = Math.min(1024, Math.floor(maxBytes / 8));
  const batch = new Uint8Array(maxBytes);
  let used = 0;
  let lines = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const send = () => {
    if (used === 0) return;
    const bytes = batch.subarray(0, used);
    used = 0;
    out(bytes);
  };
  const encode = () => {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    const most = 3 * lines.length;
    if (used + most > maxBytes) send();
    if (most > maxBytes) out(encoder.encode(lines));
    else used += encoder.encodeInto(lines, batch.subarray(used)).written;
    lines = "";
  };
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (lines !== "") encode();
    send();
  };
  addEventListener("unload", flush);
  return {
    write(line) {
      lines += `${line}\n`;
      if (lines.length >= encodeAt) encode();
      timer ??= setTimeout(flush, delayMs);
    },
    flush,
  };
}

/**
 * The request log's observer: one line per answered request to `sink`, with
 * the time it was answered (ISO 8601, UTC), method, path, status,
 * milliseconds, and in JSON the client's address. Never a header, a query or
 * a body: the token and the messages stay out of the log. Given as
 * `createHandler`'s `onResponse`, it shares the clock of the metrics.
 */
export function requestLogger(
  sink: LogSink,
  options: RequestLogOptions = {},
): ResponseObserver {
  const clientOf = options.clientOf ?? clientAddressOf();
  const json = options.format === "json";
  // Many requests are answered within one millisecond: the time is
  // formatted once for all of them.
  let lastMs = 0;
  let lastTime = "";
  return (req, res, ms, info) => {
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      lastTime = new Date(now).toISOString();
    }
    // The path only: the query is the client's business, and the token
    // travels in a header, which is never logged.
    sink.write(
      json
        ? JSON.stringify({
          time: lastTime,
          method: req.method,
          route: requestPath(req),
          status: res.status,
          ms: Math.round(ms * 100) / 100,
          client: clientOf(req, info),
        })
        : `${lastTime} ${req.method} ${requestPath(req)} ${res.status} ${
          ms.toFixed(2)
        }ms`,
    );
  };
}
