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

/**
 * One event. `data` must be one line; JSON text always is, since
 * `JSON.stringify` escapes line breaks inside strings.
 */
export function encodeEvent(
  event: string,
  data: string,
  id?: number,
): Uint8Array<ArrayBuffer> {
  const idLine = id === undefined ? "" : `id: ${id}\n`;
  return encoder.encode(`${idLine}event: ${event}\ndata: ${data}\n\n`);
}
