/**
 * The `text/event-stream` wire format, as browsers' `EventSource` reads it.
 * Every event is encoded once and the same bytes go to every reader.
 * @module
 */

/** The content type of an event stream. */
export const EVENT_STREAM_CONTENT_TYPE = "text/event-stream; charset=utf-8";

const encoder = new TextEncoder();

/**
 * The first bytes of every stream: reconnect after a second. A reader that
 * lost its connection comes back with `Last-Event-ID` and misses nothing.
 */
export const RETRY = encoder.encode("retry: 1000\n\n");

/** A comment line, sent when a stream has been quiet for the heartbeat interval. */
export const HEARTBEAT = encoder.encode(": heartbeat\n\n");

const LINE_BREAK = /\r\n|\r|\n/;

/**
 * One event. Each line of `data` goes out as a `data:` line of its own, so
 * a reader gets `data` back with its line breaks as `\n` (JSON text, the
 * usual data, is one line: `JSON.stringify` escapes line breaks). `event`
 * is a name the code chose; a line break in it would end the field and
 * forge the next, so it is refused.
 */
export function encodeEvent(
  event: string,
  data: string,
  id?: number,
): Uint8Array<ArrayBuffer> {
  if (LINE_BREAK.test(event)) {
    throw new RangeError(
      `an event name has no line break: ${JSON.stringify(event)}`,
    );
  }
  const idLine = id === undefined ? "" : `id: ${id}\n`;
  const dataLines = LINE_BREAK.test(data)
    ? data.split(LINE_BREAK).map((line) => `data: ${line}\n`).join("")
    : `data: ${data}\n`;
  return encoder.encode(`${idLine}event: ${event}\n${dataLines}\n`);
}
