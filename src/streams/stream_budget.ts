/**
 * One bound on the bytes waiting for all readers of a process, a shared chunk counted once,
 * so a few stalled readers cannot hold `readers × per-reader bound` (docs/architecture.md).
 * @module
 */

/** One reader's share of a {@linkcode StreamBudget}. */
export interface BudgetShare {
  /** Counted in the total once, however many readers hold it. */
  hold(chunk: object | string, bytes: number): void;
  drop(chunk: object | string): void;
  /** What its held chunks do not account for counts as its own. */
  measure(): void;
  /** Whether anything waited when last counted: if not, nothing can have drained since. */
  readonly waiting: boolean;
  close(): void;
}

interface Held {
  bytes: number;
  holds: number;
}

interface Reader {
  /** Its place in the order of whom to cut. */
  queuedBytes: () => number;
  /** Its share is closed already. */
  cut: () => void;
  holds: Map<object | string, number>;
  heldBytes: number;
  /** What waits beyond its held chunks, as last measured. */
  ownBytes: number;
}

/** One bound on the bytes waiting for all readers of a process. */
export class StreamBudget {
  readonly maxBytes: number;
  #held = new Map<object | string, Held>();
  #heldBytes = 0;
  #ownBytes = 0;
  #readers = new Set<Reader>();

  /**
   * @example A shared chunk counts once; the reader furthest behind is cut first
   * ```ts
   * import assert from "node:assert/strict";
   * import { StreamBudget } from "./stream_budget.ts";
   * const budget = new StreamBudget(100);
   * const cut: string[] = [];
   * const catchUp = new Uint8Array(60);
   * const queued = { slow: 0, fast: 0 };
   * const slow = budget.share(() => queued.slow, () => cut.push("slow"));
   * const fast = budget.share(() => queued.fast, () => cut.push("fast"));
   * for (const share of [slow, fast]) share.hold(catchUp, 60);
   * queued.slow = queued.fast = 60;
   * assert.equal(budget.total, 60);
   * // Copies only one reader holds count for each.
   * queued.slow = 90;
   * slow.measure();
   * queued.fast = 80;
   * fast.measure();
   * assert.deepEqual(cut, ["slow"]);
   * assert.equal(budget.total, 80);
   * ```
   */
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  get total(): number {
    return this.#heldBytes + this.#ownBytes;
  }

  share(queuedBytes: () => number, cut: () => void): BudgetShare {
    const reader: Reader = {
      queuedBytes,
      cut,
      holds: new Map(),
      heldBytes: 0,
      ownBytes: 0,
    };
    this.#readers.add(reader);
    return {
      hold: (chunk, bytes) => {
        if (!this.#readers.has(reader)) return;
        reader.holds.set(chunk, (reader.holds.get(chunk) ?? 0) + 1);
        reader.heldBytes += bytes;
        const held = this.#held.get(chunk);
        if (held !== undefined) held.holds++;
        else {
          this.#held.set(chunk, { bytes, holds: 1 });
          this.#heldBytes += bytes;
          this.#cutWhileOver();
        }
      },
      drop: (chunk) => {
        const holds = reader.holds.get(chunk);
        if (holds === undefined) return;
        if (holds === 1) reader.holds.delete(chunk);
        else reader.holds.set(chunk, holds - 1);
        reader.heldBytes -= this.#release(chunk, 1);
      },
      measure: () => {
        if (!this.#readers.has(reader)) return;
        if (this.#measure(reader)) this.#cutWhileOver();
      },
      get waiting() {
        return reader.ownBytes + reader.heldBytes > 0;
      },
      close: () => this.#close(reader),
    };
  }

  /** Answers whether the reader's own bytes grew. */
  #measure(reader: Reader): boolean {
    const own = Math.max(0, reader.queuedBytes() - reader.heldBytes);
    const grew = own > reader.ownBytes;
    this.#ownBytes += own - reader.ownBytes;
    reader.ownBytes = own;
    return grew;
  }

  #release(chunk: object | string, count: number): number {
    const held = this.#held.get(chunk);
    if (held === undefined) return 0;
    held.holds -= count;
    if (held.holds <= 0) {
      this.#held.delete(chunk);
      this.#heldBytes -= held.bytes;
    }
    return held.bytes * count;
  }

  #close(reader: Reader): void {
    if (!this.#readers.delete(reader)) return;
    for (const [chunk, count] of reader.holds) this.#release(chunk, count);
    reader.holds.clear();
    this.#ownBytes -= reader.ownBytes;
    reader.heldBytes = reader.ownBytes = 0;
  }

  #cutWhileOver(): void {
    if (this.total <= this.maxBytes) return;
    // What a WebSocket drained since its last measure must not cost anyone their stream.
    for (const reader of this.#readers) this.#measure(reader);
    // Each pass closes one share, so this ends.
    while (this.total > this.maxBytes && this.#readers.size > 0) {
      let furthest: Reader | undefined;
      let most = -1;
      for (const reader of this.#readers) {
        const queued = reader.queuedBytes();
        if (queued > most) [furthest, most] = [reader, queued];
      }
      if (furthest === undefined) return;
      this.#close(furthest);
      furthest.cut();
    }
  }
}
