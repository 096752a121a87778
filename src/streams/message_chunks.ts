/**
 * The newest messages' events, kept once so a thousand readers hold the same bytes, not copies.
 * @module
 */

import { StreamEvent } from "./event_stream_format.ts";

/** A catch-up without `Last-Event-ID` sends five. */
const KEPT = 32;

export class MessageChunks {
  /** In insertion order: the first entry is the oldest. */
  #byId = new Map<number, StreamEvent>();

  /**
   * @example The same bytes for every reader
   * ```ts
   * import assert from "node:assert/strict";
   * import { MessageChunks } from "./message_chunks.ts";
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
