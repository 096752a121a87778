/**
 * Many waits of one length watched by one timer: the request bodies still
 * arriving, the commands waiting for Redis. Deno 2.9's timers are Node's
 * `Timeout` objects, so a timer set and cleared per wait is a cost every
 * request paid; one for all made a `POST /quote` on Redis a fifth cheaper
 * (see `bench/results/profiles/timers.md`).
 *
 * The waits are a linked list, not a `Map`: a wait is added and removed for
 * every request, and a long-lived `Map` with that churn rebuilds its table
 * every few dozen changes. Once V8 has moved the table to the old
 * generation (after an idle spell, or a spell of other requests), each new
 * table is allocated there too, so every rebuild became old-space garbage
 * and the process grew well past plain `Deno.serve` while messages were
 * posted (see `bench/results/profiles/old_space_churn.md`).
 * @module
 */

/**
 * How often the waits are checked: a quarter of their length, but at least
 * every second, so a wait ends between 1 and 1.25 times its length after it
 * started. Counting checks spares a clock reading per wait.
 */
function checkEveryMs(timeoutMs: number): number {
  return Math.min(1000, Math.max(5, Math.ceil(timeoutMs / 4)));
}

/** A wait that {@linkcode Deadlines.add} started; hand it back to `delete` to end it. */
export interface Wait<T> {
  /** What is waited for. */
  readonly item: T;
}

class Link<T> implements Wait<T> {
  prev: Link<T> | undefined;
  next: Link<T> | undefined;
  waiting = true;
  constructor(readonly item: T, readonly lateAt: number) {}
}

/** Waits of `timeoutMs` each; `onExpire` is told of each one that ran out. */
export class Deadlines<T> {
  #onExpire: (item: T) => void;
  #period: number;
  /** A wait starts anywhere between two checks, hence the one more. */
  #checksToDeadline: number;
  #checks = 0;
  /** In start order, so in expiry order too: every wait has one length. */
  #first: Link<T> | undefined;
  #last: Link<T> | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(timeoutMs: number, onExpire: (item: T) => void) {
    this.#onExpire = onExpire;
    this.#period = checkEveryMs(timeoutMs);
    this.#checksToDeadline = Math.ceil(timeoutMs / this.#period) + 1;
  }

  /** Starts waiting for `item`. */
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

  /** Ends `wait`, one this instance started: true if it was waiting, false if it had expired or ended already. */
  delete(wait: Wait<T>): boolean {
    const link = wait as Link<T>;
    if (!link.waiting) return false;
    this.#unlink(link);
    // The timer keeps the process alive only while something waits; it is
    // cleared at the first check that finds nothing, and toggling it costs a
    // small fraction of clearing and setting it again (see
    // bench/results/profiles/timers.md).
    if (this.#first === undefined) Deno.unrefTimer(this.#timer!);
    return true;
  }

  /** Ends every wait at once, answering their items in start order; nothing of them expires later. */
  clear(): T[] {
    const items: T[] = [];
    for (let link = this.#first; link !== undefined; link = this.#first) {
      items.push(link.item);
      this.#unlink(link);
    }
    if (this.#timer !== undefined) Deno.unrefTimer(this.#timer);
    return items;
  }

  /** Stops waiting for everything: nothing more expires, and the timer is cleared. */
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
    // V8 takes pointers from the old generation as roots when it collects
    // the young one, so a link that aged there, even once garbage, would
    // keep its young neighbours alive.
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
