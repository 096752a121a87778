/**
 * A fixed-size ring, newest overwriting oldest: inserting costs the same at any count.
 * @module
 */

export class Ring {
  #items: string[];
  #next = 0;
  #size = 0;

  constructor(readonly capacity: number) {
    this.#items = new Array(capacity);
  }

  push(item: string): void {
    this.#items[this.#next] = item;
    this.#next = (this.#next + 1) % this.capacity;
    if (this.#size < this.capacity) this.#size++;
  }

  get size(): number {
    return this.#size;
  }

  oldestFirst(limit: number): string[] {
    const count = Math.min(limit, this.#size);
    const start = this.#next - count;
    // Slices rather than indexing: every slot in range holds an item.
    return start >= 0
      ? this.#items.slice(start, this.#next)
      : this.#items.slice(start + this.capacity).concat(
        this.#items.slice(0, this.#next),
      );
  }

  /** Up to `limit` items, newest first, after skipping the newest `skip`. */
  newestAfter(skip: number, limit: number): string[] {
    const items: string[] = [];
    const end = Math.min(this.#size, skip + limit);
    for (let i = skip; i < end; i++) {
      items.push(
        this.#items[(this.#next - 1 - i + 2 * this.capacity) % this.capacity]!,
      );
    }
    return items;
  }
}
