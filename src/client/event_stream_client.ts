/**
 * Following a service's event stream from a client: reconnects after the
 * server's `retry` delay whenever the stream ends or the connection fails,
 * sending `Last-Event-ID` so the server resumes where the reader was.
 * Parsed with the well-kept `eventsource-parser`.
 * @module
 */

import { createParser, type EventSourceMessage } from "eventsource-parser";
import { ServiceError } from "./service_error.ts";

/**
 * How a client follows a stream.
 *
 * @example Resuming after a message, until a signal ends it
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler } from "@lms/light-messaging";
 * import { type FollowOptions, MessagingClient } from "@lms/light-messaging/client";
 * await using server = Deno.serve(
 *   { hostname: "127.0.0.1", port: 0, onListen() {} },
 *   createHandler(),
 * );
 * const chat = new MessagingClient(`http://127.0.0.1:${server.addr.port}/`);
 * await chat.register("ann");
 * for (const text of ["One", "Two", "Three"]) await chat.post(text);
 * const stop = new AbortController();
 * const options: FollowOptions = { lastEventId: 1, signal: stop.signal };
 * const texts: string[] = [];
 * for await (const event of chat.events(options)) {
 *   if (event.type === "message") texts.push(event.message.text);
 *   if (texts.length === 2) stop.abort(); // ends the iteration
 * }
 * assert.deepEqual(texts, ["Two", "Three"]);
 * ```
 */
export interface FollowOptions {
  /** Ends the iteration (and the connection) when aborted. */
  signal?: AbortSignal;
  /** Told when the stream was lost, before each reconnection. */
  onReconnect?: (reason: unknown) => void;
  /** Resume after this message id, as a reconnecting reader does. */
  lastEventId?: number;
}

function wait(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}

/**
 * The events of the stream at `url`, for as long as `options.signal` allows.
 * A refusal the client cannot fix by waiting (4xx) ends it with a
 * {@linkcode ServiceError}; anything else is retried. `headers` are asked
 * for on every connection, so a credential changed meanwhile is sent.
 */
export async function* followEventStream(
  fetchFn: typeof fetch,
  url: URL,
  options: FollowOptions = {},
  headers: () => Record<string, string> = () => ({}),
): AsyncGenerator<EventSourceMessage> {
  const { signal } = options;
  let lastEventId = options.lastEventId?.toString();
  let retryMs = 1000;
  // Each pass either yields events or waits retryMs, and ends when aborted.
  while (!signal?.aborted) {
    let reason: unknown = new Error("the stream ended");
    try {
      const res = await fetchFn(url, {
        headers: lastEventId === undefined
          ? headers()
          : { ...headers(), "last-event-id": lastEventId },
        signal,
      });
      if (!res.ok || res.body === null) {
        const text = await res.text();
        let body: unknown = { message: text };
        try {
          body = JSON.parse(text);
        } catch {
          // Not JSON: the text is the message.
        }
        throw new ServiceError(
          res.status,
          body,
          res.headers.get("retry-after"),
        );
      }
      const queue: EventSourceMessage[] = [];
      const parser = createParser({
        onEvent: (event) => queue.push(event),
        onRetry: (ms) => retryMs = ms,
      });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          parser.feed(value);
          for (let event; (event = queue.shift());) {
            if (event.id !== undefined) lastEventId = event.id;
            yield event;
          }
        }
      } finally {
        reader.cancel().catch(() => {});
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (error instanceof ServiceError && error.status < 500) throw error;
      reason = error;
    }
    options.onReconnect?.(reason);
    await wait(retryMs, signal);
  }
}
