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

/** What every share of one budget counts together. */
interface Pool {
  readonly maxBytes: number;
  held: Map<object | string, Held>;
  heldBytes: number;
  ownBytes: number;
  readers: Set<Share>;
}

/**
 * A class rather than closures over the budget: one object per reader, and
 * its holds made on its first hold, as most readers never hold one
 * (bench/results/profiles/scale.md, "What each follower holds").
 */
class Share implements BudgetShare {
  #holds: Map<object | string, number> | undefined;
  heldBytes = 0;
  /** What waits beyond its held chunks, as last measured. */
  ownBytes = 0;

  constructor(
    readonly pool: Pool,
    /** Its place in the order of whom to cut. */
    readonly queuedBytes: () => number,
    /** Its share is closed already. */
    readonly cut: () => void,
  ) {}

  hold(chunk: object | string, bytes: number): void {
    const pool = this.pool;
    if (!pool.readers.has(this)) return;
    const holds = this.#holds ??= new Map();
    holds.set(chunk, (holds.get(chunk) ?? 0) + 1);
    this.heldBytes += bytes;
    const held = pool.held.get(chunk);
    if (held !== undefined) held.holds++;
    else {
      pool.held.set(chunk, { bytes, holds: 1 });
      pool.heldBytes += bytes;
      cutWhileOver(pool);
    }
  }

  drop(chunk: object | string): void {
    const holds = this.#holds?.get(chunk);
    if (holds === undefined) return;
    if (holds === 1) this.#holds!.delete(chunk);
    else this.#holds!.set(chunk, holds - 1);
    this.heldBytes -= release(this.pool, chunk, 1);
  }

  measure(): void {
    if (!this.pool.readers.has(this)) return;
    if (this.remeasure()) cutWhileOver(this.pool);
  }

  get waiting(): boolean {
    return this.ownBytes + this.heldBytes > 0;
  }

  close(): void {
    const pool = this.pool;
    if (!pool.readers.delete(this)) return;
    for (const [chunk, count] of this.#holds ?? []) release(pool, chunk, count);
    this.#holds = undefined;
    pool.ownBytes -= this.ownBytes;
    this.heldBytes = this.ownBytes = 0;
  }

  /** Counts what waits beyond its held chunks; answers whether it grew. */
  remeasure(): boolean {
    const own = Math.max(0, this.queuedBytes() - this.heldBytes);
    const grew = own > this.ownBytes;
    this.pool.ownBytes += own - this.ownBytes;
    this.ownBytes = own;
    return grew;
  }
}

function release(pool: Pool, chunk: object | string, count: number): number {
  const held = pool.held.get(chunk);
  if (held === undefined) return 0;
  held.holds -= count;
  if (held.holds <= 0) {
    pool.held.delete(chunk);
    pool.heldBytes -= held.bytes;
  }
  return held.bytes * count;
}

function cutWhileOver(pool: Pool): void {
  const total = () => pool.heldBytes + pool.ownBytes;
  if (total() <= pool.maxBytes) return;
  // What a WebSocket drained since its last measure must not cost anyone their stream.
  for (const reader of pool.readers) reader.remeasure();
  // Each pass closes one share, so this ends.
  while (total() > pool.maxBytes && pool.readers.size > 0) {
    let furthest: Share | undefined;
    let most = -1;
    for (const reader of pool.readers) {
      const queued = reader.queuedBytes();
      if (queued > most) [furthest, most] = [reader, queued];
    }
    if (furthest === undefined) return;
    furthest.close();
    furthest.cut();
  }
}

/** One bound on the bytes waiting for all readers of a process. */
export class StreamBudget {
  readonly #pool: Pool;

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
    this.#pool = {
      maxBytes,
      held: new Map(),
      heldBytes: 0,
      ownBytes: 0,
      readers: new Set(),
    };
  }

  get maxBytes(): number {
    return this.#pool.maxBytes;
  }

  get total(): number {
    return this.#pool.heldBytes + this.#pool.ownBytes;
  }

  /** A new reader's share; `cut` is told when the budget closes it to make room. */
  share(queuedBytes: () => number, cut: () => void): BudgetShare {
    const share = new Share(this.#pool, queuedBytes, cut);
    this.#pool.readers.add(share);
    return share;
  }
}
