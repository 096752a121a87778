/**
 * The server-sent event transport: a `ReadableStream` that a `Response`
 * carries, opening with `retry: 1000`.
 * @module
 */

import { HEARTBEAT, RETRY, type StreamEvent } from "./event_stream_format.ts";
import type { EndReason, Transport } from "./transport.ts";

/**
 * What an ended stream fails with: Deno reports it to the server's
 * `onError`, which should pass over it, since it is no fault.
 */
export class StreamEnded extends Error {
  /** The reason, for the log of whoever looks. */
  constructor(reason: string) {
    super(reason);
    this.name = "StreamEnded";
  }
}

/** One reader's event stream: the body of its `Response`. */
export class SseTransport implements Transport {
  /** The body of the `Response`. */
  readonly body: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;

  /** A stream that tells `gone` when its reader cancels it. */
  constructor(gone: () => void) {
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
        controller.enqueue(RETRY);
      },
      cancel: gone,
      // desiredSize then goes down by the bytes waiting for the reader.
    }, new ByteLengthQueuingStrategy({ highWaterMark: 0 }));
  }

  send(event: StreamEvent): void {
    this.#controller.enqueue(event.sse);
  }

  get queuedBytes(): number {
    return -(this.#controller.desiredSize ?? 0);
  }

  heartbeat(): void {
    this.#controller.enqueue(HEARTBEAT);
  }

  /**
   * Closes the body after what is queued, or errors it at once (dropping
   * what is queued) for a reader too far behind or a failed catch-up, and
   * when bytes still wait: a close would wait for a reader that may never
   * come. The reader may reconnect and catch up.
   */
  close(reason: EndReason): void {
    const abort = reason !== "reconnect" && reason !== "stopping";
    try {
      if (abort || this.queuedBytes > 0) {
        this.#controller.error(new StreamEnded("the stream was ended"));
      } else this.#controller.close();
    } catch {
      // Already closed by its reader.
    }
  }
}
