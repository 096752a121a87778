/**
 * A fixed-size ring: inserting costs the same at any count, and memory stops
 * growing at the capacity.
 * @module
 */

/** A fixed-capacity ring of strings, newest overwriting oldest. */
export class Ring {
  #items: string[];
  #next = 0;
  #size = 0;

  /** Makes an empty ring holding at most `capacity` items. */
  constructor(readonly capacity: number) {
    this.#items = new Array(capacity);
  }

  /** Inserts `item` as the newest. */
  push(item: string): void {
    this.#items[this.#next] = item;
    this.#next = (this.#next + 1) % this.capacity;
    if (this.#size < this.capacity) this.#size++;
  }

  /** How many items are held. */
  get size(): number {
    return this.#size;
  }

  /** The newest `limit` items, oldest first. */
  oldestFirst(limit: number): string[] {
    const count = Math.min(limit, this.#size);
    const out = new Array<string>(count);
    const start = this.#next - count + this.capacity;
    for (let i = 0; i < count; i++) {
      out[i] = this.#items[(start + i) % this.capacity];
    }
    return out;
  }

  /** The newest `limit` items, newest first. */
  newest(limit: number): string[] {
    const count = Math.min(limit, this.#size);
    const out = new Array<string>(count);
    for (let i = 0; i < count; i++) {
      out[i] =
        this.#items[(this.#next - 1 - i + this.capacity) % this.capacity];
    }
    return out;
  }
}
