/**
 * The `message` events of the newest messages, kept once for every stream:
 * a thousand readers catching up on the same five messages, and then
 * reading the next one live, hold the same encoded bytes (or the same
 * WebSocket frames), not a thousand copies of them.
 * @module
 */

import { StreamEvent } from "./event_stream_format.ts";

/** How many of the newest messages stay kept: a catch-up without `Last-Event-ID` sends five. */
const KEPT = 32;

/** The message events of the newest messages, by id. */
export class MessageChunks {
  /** In insertion order, so the first entry is the one kept longest. */
  #byId = new Map<number, StreamEvent>();

  /**
   * The `message` event of message `id` whose JSON is `json`: the same
   * event, encoded at most once per transport, as the last time it was
   * asked for, while it is among the newest.
   *
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
    // Bounded: one entry out for each one in past KEPT.
    for (const oldest of this.#byId.keys()) {
      if (this.#byId.size <= KEPT) break;
      this.#byId.delete(oldest);
    }
    return event;
  }
}
