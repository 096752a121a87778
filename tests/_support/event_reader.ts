/** Reads an event stream the way a client does, with eventsource-parser, one item at a time. */

import { createParser } from "eventsource-parser";

/** What a stream sent: an event, a comment, or its `retry` field. */
export type StreamItem =
  | { type: "event"; event?: string; id?: string; data: string }
  | { type: "comment"; text: string }
  | { type: "retry"; ms: number };

/** An event as the stream sent it. */
export type StreamEvent = Extract<StreamItem, { type: "event" }>;

/** A reader of one event stream. */
export interface EventReader {
  /** The next item, or `null` when the stream ended; fails after `timeoutMs`. */
  next(timeoutMs?: number): Promise<StreamItem | null>;
  /**
   * The next `count` events (comments and retry skipped); fails when
   * `timeoutMs` pass without an event. Comments do not count: a stream
   * that only sends heartbeats fails as a silent one does.
   */
  events(count: number, timeoutMs?: number): Promise<StreamEvent[]>;
  /** The next event (comments and retry skipped), as {@linkcode EventReader.events} waits for it. */
  event(timeoutMs?: number): Promise<StreamEvent>;
  /**
   * Stops reading: the server sees the reader leave. Fails when the stream
   * has not let go after `timeoutMs` (5 s by default).
   */
  close(timeoutMs?: number): Promise<void>;
}

/** Starts reading `body`. */
export function readEvents(body: ReadableStream<Uint8Array>): EventReader {
  const items: (StreamItem | null)[] = [];
  let wake = () => {};
  const push = (item: StreamItem | null) => {
    items.push(item);
    wake();
  };
  const parser = createParser({
    onEvent: (e) =>
      push({ type: "event", event: e.event, id: e.id, data: e.data }),
    onComment: (text) => push({ type: "comment", text }),
    onRetry: (ms) => push({ type: "retry", ms }),
  });
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const pump = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
    } catch {
      // Ended by the server (an error) or by close(): both end the stream.
    }
    push(null);
  })();
  const next = async (timeoutMs = 5000): Promise<StreamItem | null> => {
    const deadline = Date.now() + timeoutMs;
    while (items.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("no event in time");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    const item = items.shift()!;
    if (item === null) items.unshift(null);
    return item;
  };
  const events = async (count: number, timeoutMs = 5000) => {
    const out: StreamEvent[] = [];
    let deadline = Date.now() + timeoutMs;
    let skipped = 0;
    while (out.length < count) {
      const item = await next(Math.max(1, deadline - Date.now())).catch(
        () => {
          throw new Error(
            `no event within ${timeoutMs} ms (${out.length} of ${count} ` +
              `so far; ${skipped} comments or retry fields meanwhile)`,
          );
        },
      );
      if (item === null) {
        throw new Error(`stream ended after ${out.length} events`);
      }
      if (item.type !== "event") skipped++;
      else {
        out.push(item);
        deadline = Date.now() + timeoutMs;
        skipped = 0;
      }
    }
    return out;
  };
  return {
    next,
    events,
    async event(timeoutMs) {
      const [event] = await events(1, timeoutMs);
      if (event === undefined) throw new Error("no event");
      return event;
    },
    async close(timeoutMs = 5000) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new Error(
                `the event stream did not close within ${timeoutMs} ms`,
              ),
            ),
          timeoutMs,
        );
      });
      try {
        await Promise.race([
          (async () => {
            await reader.cancel().catch(() => {});
            await pump;
          })(),
          late,
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
