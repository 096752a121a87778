/**
 * The program's own lines, as text or as JSON like the request log.
 * @module
 */

import type { LogFormat } from "../http/request_log.ts";

/** `info` on standard output, `error` on standard error. */
export interface ProgramLog {
  /** On standard output, plain text in either format: the contract fixes the line scripts read. */
  banner(line: string): void;
  info(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
  /** With its stack: for the operator's eyes, never a client's. */
  fault(message: string, error: unknown): void;
  /** Lost (`error`), or back (`info`). */
  report(message: string, level: "error" | "info"): void;
}

type Fields = Record<string, unknown>;

export function programLog(format: LogFormat): ProgramLog {
  const line = (level: "info" | "error", message: string, fields = {}) =>
    format === "json"
      ? JSON.stringify({
        time: new Date().toISOString(),
        level,
        message,
        ...fields,
      })
      : [message, ...Object.values(fields).map(String)].join(" ");
  const error = (message: string, fields?: Fields) =>
    console.error(line("error", message, fields));
  return {
    banner: (text) => console.log(text),
    info: (message, fields) => console.log(line("info", message, fields)),
    error,
    report: (message, level) => console.error(line(level, message)),
    fault: (message, fault) =>
      error(message, {
        error: fault instanceof Error ? fault.stack : String(fault),
      }),
  };
}
