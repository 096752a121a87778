/**
 * The server-sent event transport: a `ReadableStream` body, opening with `retry: 1000`.
 * @module
 */

import { HEARTBEAT, RETRY, type StreamEvent } from "./event_stream_format.ts";
import type { BudgetShare } from "./stream_budget.ts";
import type { EndReason, Transport } from "./transport.ts";

/** No fault: Deno reports it to the server's `onError`, which should pass over it. */
export class StreamEnded extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "StreamEnded";
  }
}

/** Deno's per-connection write buffer keeps its grown size (bench/results/profiles/stream_memory.md). */
const PIECE_BYTES = 16 * 1024;

/** Fills a taken slot so its chunk can be collected. */
const EMPTY = new Uint8Array(0);

/** Chunks go to Deno only as it pulls: what waits is counted here, shared (docs/architecture.md). */
export class SseTransport implements Transport {
  readonly body: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #share: BudgetShare;
  #queue: Uint8Array[] = [];
  #first = 0;
  #offset = 0;
  #queuedBytes = 0;
  /** Deno asked when nothing was queued: the next piece goes at once. */
  #wanted = false;

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
    // Not held in the budget: one constant, however many wait for it.
    this.#queue.push(RETRY);
    this.#queuedBytes = RETRY.byteLength;
  }

  send(event: StreamEvent): void {
    this.#push(event.sse);
  }

  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  beat(_now: number, quiet: boolean): void {
    if (quiet) this.#push(HEARTBEAT);
  }

  /** Errors instead of closing when bytes still wait: a close would wait for a reader that may never come. */
  close(reason: EndReason): void {
    // An unregistered reader was told by the last event: it sees an end, not a fault.
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
    // The usual case, a reader keeping up; `#wanted` outlives a pull only when nothing was queued: nothing is counted.
    if (this.#wanted && chunk.byteLength <= PIECE_BYTES) {
      this.#wanted = false;
      this.#controller.enqueue(chunk);
      return;
    }
    this.#queue.push(chunk);
    this.#queuedBytes += chunk.byteLength;
    this.#share.hold(chunk, chunk.byteLength);
    if (this.#wanted) this.#pull();
  }

  #pull(): void {
    const chunk = this.#queue[this.#first];
    if (chunk === undefined) return;
    this.#wanted = false;
    const piece = chunk.subarray(this.#offset, this.#offset + PIECE_BYTES);
    this.#offset += piece.byteLength;
    this.#queuedBytes -= piece.byteLength;
    if (this.#offset === chunk.byteLength) {
      // Without shifting the whole array each time.
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
