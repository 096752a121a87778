/**
 * One bound on the bytes waiting for all readers of a process, a shared chunk counted once,
 * so a few stalled readers cannot hold `readers × per-reader bound` (docs/architecture.md).
 * @module
 */

/**
 * One reader's share of a {@linkcode StreamBudget}: a class, not closures, its map made on first
 * hold, as most readers hold none (bench/results/profiles/scale.md, "What each follower holds").
 */
export class BudgetShare {
  #holds: Map<object | string, number> | undefined;
  heldBytes = 0;
  /** What waits beyond its held chunks, as last measured. */
  ownBytes = 0;

  constructor(
    readonly budget: StreamBudget,
    /** Its place in the order of whom to cut. */
    readonly queuedBytes: () => number,
    /** Its share is closed already. */
    readonly cut: () => void,
  ) {}

  /** Counted in the total once, however many readers hold it. */
  hold(chunk: object | string, bytes: number): void {
    const budget = this.budget;
    if (!budget.readers.has(this)) return;
    const holds = this.#holds ??= new Map();
    holds.set(chunk, (holds.get(chunk) ?? 0) + 1);
    this.heldBytes += bytes;
    const held = budget.held.get(chunk);
    if (held !== undefined) held.holds++;
    else {
      budget.held.set(chunk, { bytes, holds: 1 });
      budget.heldBytes += bytes;
      budget.cutWhileOver();
    }
  }

  drop(chunk: object | string): void {
    const holds = this.#holds?.get(chunk);
    if (holds === undefined) return;
    if (holds === 1) this.#holds!.delete(chunk);
    else this.#holds!.set(chunk, holds - 1);
    this.heldBytes -= this.budget.release(chunk, 1);
  }

  /** What its held chunks do not account for counts as its own: `queued`, if the caller has just read it. */
  measure(queued?: number): void {
    if (!this.budget.readers.has(this)) return;
    if (this.remeasure(queued)) this.budget.cutWhileOver();
  }

  /** Whether anything waited when last counted: if not, nothing can have drained since. */
  get waiting(): boolean {
    return this.ownBytes + this.heldBytes > 0;
  }

  close(): void {
    const budget = this.budget;
    if (!budget.readers.delete(this)) return;
    for (const [chunk, count] of this.#holds ?? []) {
      budget.release(chunk, count);
    }
    this.#holds = undefined;
    budget.ownBytes -= this.ownBytes;
    this.heldBytes = this.ownBytes = 0;
  }

  /** Counts what waits beyond its held chunks; answers whether it grew. */
  remeasure(queued = this.queuedBytes()): boolean {
    const own = Math.max(0, queued - this.heldBytes);
    const grew = own > this.ownBytes;
    this.budget.ownBytes += own - this.ownBytes;
    this.ownBytes = own;
    return grew;
  }
}

/** Its counts are kept by its shares. */
export class StreamBudget {
  /** Each held chunk once, with how many holds it has. */
  readonly held = new Map<object | string, { bytes: number; holds: number }>();
  heldBytes = 0;
  ownBytes = 0;
  readonly readers = new Set<BudgetShare>();

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
  constructor(readonly maxBytes: number) {}

  get total(): number {
    return this.heldBytes + this.ownBytes;
  }

  /** A new reader's share; `cut` is told when the budget closes it to make room. */
  share(queuedBytes: () => number, cut: () => void): BudgetShare {
    const share = new BudgetShare(this, queuedBytes, cut);
    this.readers.add(share);
    return share;
  }

  /** Answers the bytes `count` holds of `chunk` stood for. */
  release(chunk: object | string, count: number): number {
    const held = this.held.get(chunk);
    if (held === undefined) return 0;
    held.holds -= count;
    if (held.holds <= 0) {
      this.held.delete(chunk);
      this.heldBytes -= held.bytes;
    }
    return held.bytes * count;
  }

  cutWhileOver(): void {
    if (this.total <= this.maxBytes) return;
    // What a WebSocket drained since its last measure must not cost anyone their stream.
    for (const reader of this.readers) reader.remeasure();
    // Each pass closes one share, so this ends.
    while (this.total > this.maxBytes && this.readers.size > 0) {
      let furthest: BudgetShare | undefined;
      let most = -1;
      for (const reader of this.readers) {
        const queued = reader.queuedBytes();
        if (queued > most) [furthest, most] = [reader, queued];
      }
      if (furthest === undefined) return;
      furthest.close();
      furthest.cut();
    }
  }
}
