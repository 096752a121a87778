/**
 * The request log, written in batches off the request path (docs/architecture.md).
 * @module
 */

import { type ClientAddressOf, clientAddressOf } from "./client_address.ts";
import { requestPath } from "./request_path.ts";
import type { ResponseObserver } from "./observe_responses.ts";

export type LogFormat = "text" | "json";

export interface RequestLogOptions {
  /** `text` (default): `TIME METHOD PATH STATUS MSms`; `json`: also the client. */
  format?: LogFormat;
  clientOf?: ClientAddressOf;
}

export interface LogSink {
  write(line: string): void;
  flush(): void;
}

export interface BufferedSinkOptions {
  /** Must write the bytes whole before it returns: the sink reuses them. Default: standard error. */
  out?: (bytes: Uint8Array) => void;
  /** No write is larger, except lines too big for an empty batch. Default 64 KiB. */
  maxBytes?: number;
  /** Default 50 ms. */
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
 * One write per batch (one per line doubled a `GET /quote`'s CPU), kept as bytes (request_log.md);
 * flushed on `unload`, `Deno.exit` included.
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

/** A token's 40 hex digits, or any run a part of one could be, each digit maybe percent-encoded. */
const HEX_RUN = /(?:[0-9a-f]|%3[0-9]|%[46][1-6]){16,}/gi;
/** Controls, format characters (U+202E reorders what follows) and line separators. */
const UNSEEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;
const MOST_SHOWN = 200;

/**
 * A path or method as the client chose it, where a careless one may have put its token: hex runs
 * masked, what could forge or reorder a line escaped (Deno hands the path over unencoded), cut.
 */
function shown(text: string): string {
  const safe = text.replace(HEX_RUN, "…").replace(
    UNSEEN,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return safe.length > MOST_SHOWN ? `${safe.slice(0, MOST_SHOWN)}…` : safe;
}

/** Never a header, a query or a body: tokens and messages stay out of the log. */
export function requestLogger(
  sink: LogSink,
  options: RequestLogOptions = {},
): ResponseObserver {
  const clientOf = options.clientOf ?? clientAddressOf();
  const json = options.format === "json";
  // Formatted once for the many requests answered within one millisecond.
  let lastMs = 0;
  let lastTime = "";
  return (req, res, ms, info) => {
    const now = Date.now();
    if (now !== lastMs) {
      lastMs = now;
      lastTime = new Date(now).toISOString();
    }
    sink.write(
      json
        ? JSON.stringify({
          time: lastTime,
          method: shown(req.method),
          route: shown(requestPath(req)),
          status: res.status,
          ms: Math.round(ms * 100) / 100,
          client: clientOf(req, info),
        })
        : `${lastTime} ${shown(req.method)} ${
          shown(requestPath(req))
        } ${res.status} ${ms.toFixed(2)}ms`,
    );
  };
}
