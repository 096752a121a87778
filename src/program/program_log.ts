/**
 * The program's own lines, as text or as JSON like the request log.
 * @module
 */

import type { LogFormat } from "../http/request_log.ts";

/** `info` on standard output, `error` on standard error. */
export interface ProgramLog {
  info(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** With its stack: for the operator's eyes, never a client's. */
  fault(message: string, error: unknown): void;
  /** Lost (`error`), or back (`info`). */
  report(message: string, level: "error" | "info"): void;
}

function line(
  format: LogFormat,
  level: "info" | "error",
  message: string,
  fields: Record<string, unknown> = {},
): string {
  if (format === "json") {
    return JSON.stringify({
      time: new Date().toISOString(),
      level,
      message,
      ...fields,
    });
  }
  const details = Object.values(fields).map(String);
  return [message, ...details].join(" ");
}

export function programLog(format: LogFormat): ProgramLog {
  const report = (
    message: string,
    level: "error" | "info",
    fields?: Record<string, unknown>,
  ) => console.error(line(format, level, message, fields));
  const error = (message: string, fields?: Record<string, unknown>) =>
    report(message, "error", fields);
  return {
    info: (message, fields) =>
      console.log(line(format, "info", message, fields)),
    error,
    report,
    fault: (message, fault) =>
      error(message, {
        error: fault instanceof Error ? fault.stack : String(fault),
      }),
  };
}
