/**
 * The `text/event-stream` and WebSocket encodings, each event encoded at most once per format.
 * @module
 */

export const EVENT_STREAM_CONTENT_TYPE = "text/event-stream; charset=utf-8";

const encoder = new TextEncoder();

/** A reader that lost its connection comes back with `Last-Event-ID` after a second. */
export const RETRY = encoder.encode("retry: 1000\n\n");

export const HEARTBEAT = encoder.encode(": heartbeat\n\n");

const LINE_BREAK = /\r\n|\r|\n/;

/** `data` goes out one `data:` line per line; a line break in `event` would forge a field, so it throws. */
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

/** `data` is JSON text already and goes in as a value, not re-encoded. */
export function encodeFrame(event: string, data: string, id?: number): string {
  const idMember = id === undefined ? "" : `,"id":${id}`;
  return `{"event":${JSON.stringify(event)}${idMember},"data":${data}}`;
}

/** Encoded per transport on first use, so an event no WebSocket reads is never framed. */
export class StreamEvent {
  #sse: Uint8Array | undefined;
  #frame: string | undefined;

  /** `data` must be JSON text. */
  constructor(
    readonly event: string,
    readonly data: string,
    readonly id?: number,
  ) {}

  get sse(): Uint8Array {
    return this.#sse ??= encodeEvent(this.event, this.data, this.id);
  }

  get frame(): string {
    return this.#frame ??= encodeFrame(this.event, this.data, this.id);
  }
}
