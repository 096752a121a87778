/**
 * The server-sent event transport: a `ReadableStream` that a `Response`
 * carries, opening with `retry: 1000`.
 * @module
 */

import { HEARTBEAT, RETRY, type StreamEvent } from "./event_stream_format.ts";
import type { BudgetShare } from "./stream_budget.ts";
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

/**
 * The most handed to Deno at once. Deno copies what it pulls into a write
 * buffer per connection that keeps its size once grown, so big pieces make
 * every connection that once carried them costlier for as long as it stays
 * open (bench/results/profiles/stream_memory.md).
 */
const PIECE_BYTES = 16 * 1024;

/** What a taken slot of the queue holds, so its chunk can be collected. */
const EMPTY = new Uint8Array(0);

/**
 * One reader's event stream: the body of its `Response`. A chunk is handed
 * to Deno only when Deno pulls, so what Deno has not taken waits here,
 * where it is counted (a stream's own queue Deno would empty into its
 * buffers at once), and as the very chunk every other reader holds.
 */
export class SseTransport implements Transport {
  /** The body of the `Response`. */
  readonly body: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #share: BudgetShare;
  /** Chunks Deno has not taken, from `#first` on; shared with other readers. */
  #queue: Uint8Array[] = [];
  #first = 0;
  /** How much of the first queued chunk Deno has taken. */
  #offset = 0;
  #queuedBytes = 0;
  /** Deno asked for a piece when none was queued: the next is handed at once. */
  #wanted = false;

  /** A stream that tells `gone` when its reader cancels it, and holds its chunks in `share`. */
  constructor(gone: () => void, share: BudgetShare) {
    this.#share = share;
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      pull: () => {
        this.#wanted = true;
        this.#pull();
      },
      cancel: () => {
        this.#clear();
        gone();
      },
    }, { highWaterMark: 0 });
    // Not held in the budget: one constant of the module, however many wait for it.
    this.#queue.push(RETRY);
    this.#queuedBytes = RETRY.byteLength;
  }

  send(event: StreamEvent): void {
    this.#push(event.sse);
  }

  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  heartbeat(): void {
    this.#push(HEARTBEAT);
  }

  /**
   * Closes the body after what is queued, or errors it at once (dropping
   * what is queued) for a reader too far behind or a failed catch-up, and
   * when bytes still wait: a close would wait for a reader that may never
   * come. The reader may reconnect and catch up.
   */
  close(reason: EndReason): void {
    // An unregistered reader is told so by the last event, then the stream
    // ends as a stream does: clients see an end, not a fault.
    const abort = reason !== "reconnect" && reason !== "stopping" &&
      reason !== "unregistered";
    try {
      if (abort || this.#queuedBytes > 0) {
        this.#controller.error(new StreamEnded("the stream was ended"));
      } else this.#controller.close();
    } catch {
      // Already closed by its reader.
    }
    this.#clear();
  }

  #push(chunk: Uint8Array): void {
    this.#queue.push(chunk);
    this.#queuedBytes += chunk.byteLength;
    this.#share.hold(chunk, chunk.byteLength);
    if (this.#wanted) this.#pull();
  }

  #pull(): void {
    const chunk = this.#queue[this.#first];
    // Nothing queued (or the stream ended meanwhile): the next push hands it.
    if (chunk === undefined) return;
    this.#wanted = false;
    const piece = chunk.subarray(this.#offset, this.#offset + PIECE_BYTES);
    this.#offset += piece.byteLength;
    this.#queuedBytes -= piece.byteLength;
    if (this.#offset === chunk.byteLength) {
      // Taken from the front without shifting the whole array each time.
      this.#queue[this.#first++] = EMPTY;
      this.#offset = 0;
      if (this.#first === this.#queue.length) {
        this.#queue = [];
        this.#first = 0;
      }
      this.#share.drop(chunk);
    }
    this.#controller.enqueue(piece);
  }

  #clear(): void {
    this.#queue = [];
    this.#first = this.#offset = this.#queuedBytes = 0;
  }
}
