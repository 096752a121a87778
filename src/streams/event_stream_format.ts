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

/** A catch-up without `Last-Event-ID` sends five. */
const KEPT = 32;

/** The newest messages' events, kept once so a thousand readers hold the same bytes, not copies. */
export class MessageChunks {
  /** In insertion order: the first entry is the oldest. */
  #byId = new Map<number, StreamEvent>();

  /**
   * @example The same bytes for every reader
   * ```ts
   * import assert from "node:assert/strict";
   * import { MessageChunks } from "./event_stream_format.ts";
   * const messages = new MessageChunks();
   * const first = messages.event(7, '{"text":"hi"}');
   * assert.equal(messages.event(7, '{"text":"hi"}').sse, first.sse);
   * assert.equal(
   *   new TextDecoder().decode(first.sse),
   *   'id: 7\nevent: message\ndata: {"text":"hi"}\n\n',
   * );
   * ```
   */
  event(id: number, json: string): StreamEvent {
    const kept = this.#byId.get(id);
    // A store that started afresh reuses ids for other messages.
    if (kept !== undefined && kept.data === json) return kept;
    const event = new StreamEvent("message", json, id);
    this.#byId.delete(id);
    this.#byId.set(id, event);
    for (const oldest of this.#byId.keys()) {
      if (this.#byId.size <= KEPT) break;
      this.#byId.delete(oldest);
    }
    return event;
  }
}
