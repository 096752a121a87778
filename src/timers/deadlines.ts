/**
 * Many waits of one length on one timer, over a linked list rather than a churned `Map`
 * (docs/architecture.md, "One timer for many waits"; bench/results/profiles/timers.md).
 * @module
 */

export interface Wait<T> {
  readonly item: T;
}

class Link<T> implements Wait<T> {
  prev: Link<T> | undefined;
  next: Link<T> | undefined;
  waiting = true;
  constructor(readonly item: T, readonly lateAt: number) {}
}

export class Deadlines<T> {
  #onExpire: (item: T) => void;
  #period: number;
  /** A wait starts anywhere between two checks, hence the one more. */
  #checksToDeadline: number;
  #checks = 0;
  /** Start order is expiry order: every wait has one length. */
  #first: Link<T> | undefined;
  #last: Link<T> | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(timeoutMs: number, onExpire: (item: T) => void) {
    this.#onExpire = onExpire;
    // A quarter of the wait, at most a second: a wait ends within 1.25 times its length.
    this.#period = Math.min(1000, Math.max(5, Math.ceil(timeoutMs / 4)));
    this.#checksToDeadline = Math.ceil(timeoutMs / this.#period) + 1;
  }

  add(item: T): Wait<T> {
    const link = new Link(item, this.#checks + this.#checksToDeadline);
    if (this.#last === undefined) {
      this.#first = link;
      if (this.#timer === undefined) {
        this.#timer = setInterval(this.#check, this.#period);
      } else Deno.refTimer(this.#timer);
    } else {
      link.prev = this.#last;
      this.#last.next = link;
    }
    this.#last = link;
    return link;
  }

  /** False if it had expired or ended already. */
  delete(wait: Wait<T>): boolean {
    const link = wait as Link<T>;
    if (!link.waiting) return false;
    this.#unlink(link);
    // Unref'd while nothing waits: cheaper than clearing and setting it again (timers.md).
    if (this.#first === undefined) Deno.unrefTimer(this.#timer!);
    return true;
  }

  /** Answers their items in start order; nothing of them expires later. */
  clear(): T[] {
    const items: T[] = [];
    for (let link = this.#first; link !== undefined; link = this.#first) {
      items.push(link.item);
      this.#unlink(link);
    }
    if (this.#timer !== undefined) Deno.unrefTimer(this.#timer);
    return items;
  }

  close(): void {
    this.clear();
    this.#stop();
  }

  #unlink(link: Link<T>): void {
    link.waiting = false;
    if (link.prev === undefined) this.#first = link.next;
    else link.prev.next = link.next;
    if (link.next === undefined) this.#last = link.prev;
    else link.next.prev = link.prev;
    // Old-generation pointers are roots for young collections: an aged link would keep its neighbours.
    link.prev = link.next = undefined;
  }

  #stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #check = (): void => {
    this.#checks++;
    while (this.#first !== undefined && this.#first.lateAt <= this.#checks) {
      const link = this.#first;
      this.#unlink(link);
      this.#onExpire(link.item);
    }
    if (this.#first === undefined) this.#stop();
  };
}
