/**
 * The wire formats of events: the `text/event-stream` format, as browsers'
 * `EventSource` reads it, and the WebSocket text frame (one JSON object).
 * Every event is encoded at most once per format and the same bytes, or
 * the same frame, go to every reader of that format.
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

/**
 * An event as one WebSocket text frame: a JSON object with the event's
 * name, its id when it has one, and `data`, which is JSON text already (a
 * message as `GET /` shows it, a quote as a JSON string, an object) and
 * goes in as a value, not re-encoded.
 */
export function encodeFrame(event: string, data: string, id?: number): string {
  const idMember = id === undefined ? "" : `,"id":${id}`;
  return `{"event":${JSON.stringify(event)}${idMember},"data":${data}}`;
}

/**
 * One event, encoded for a transport when the first reader of that
 * transport takes it, and then kept: an event no WebSocket reads is never
 * framed, and one a thousand streams read is encoded once.
 */
export class StreamEvent {
  #sse: Uint8Array | undefined;
  #frame: string | undefined;

  /** `data` must be JSON text (the WebSocket frame embeds it as a value). */
  constructor(
    readonly event: string,
    readonly data: string,
    readonly id?: number,
  ) {}

  /** The event in the `text/event-stream` format. */
  get sse(): Uint8Array {
    return this.#sse ??= encodeEvent(this.event, this.data, this.id);
  }

  /** The event as a WebSocket text frame. */
  get frame(): string {
    return this.#frame ??= encodeFrame(this.event, this.data, this.id);
  }
}
