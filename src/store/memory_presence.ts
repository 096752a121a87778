/** Presence for the memory store, where one process holds every stream. @module */

import { forgetSweepMs, type StoreEvent } from "./store.ts";

export interface Forgetting {
  afterSeconds: number;
  /** Exactly as `removeUser` does. */
  unregister(name: string): void;
}

/**
 * @example Following one user
 * ```ts
 * import assert from "node:assert/strict";
 * import type { StoreEvent } from "./store.ts";
 * import { MemoryPresence } from "./memory_presence.ts";
 * const events: StoreEvent[] = [];
 * const presence = new MemoryPresence((event) => events.push(event));
 * presence.online("ann");
 * presence.online("ann"); // already online: nothing to tell
 * presence.offline("ann");
 * presence.close();
 * assert.deepEqual(events, [
 *   { kind: "presence", name: "ann", online: true },
 *   { kind: "presence", name: "ann", online: false },
 * ]);
 * ```
 */
export class MemoryPresence {
  #emit: (event: StoreEvent) => void;
  #online = new Set<string>();
  /** Last activity, oldest first, so a sweep stops at the first not idle. */
  #active = new Map<string, number>();
  #forgetting: Forgetting | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(emit: (event: StoreEvent) => void, forgetting?: Forgetting) {
    this.#emit = emit;
    this.#forgetting = forgetting;
    if (forgetting !== undefined) {
      this.#timer = setInterval(
        () => this.#sweep(),
        forgetSweepMs(forgetting.afterSeconds),
      );
    }
  }

  isOnline(name: string): boolean {
    return this.#online.has(name);
  }

  online(name: string): void {
    if (this.#online.has(name)) return;
    this.#online.add(name);
    this.#emit({ kind: "presence", name, online: true });
  }

  /** Its idle time starts now. */
  offline(name: string): void {
    if (!this.#online.delete(name)) return;
    this.active(name);
    this.#emit({ kind: "presence", name, online: false });
  }

  active(name: string): void {
    if (this.#forgetting === undefined) return;
    this.#active.delete(name);
    this.#active.set(name, performance.now());
  }

  removed(name: string): void {
    this.#online.delete(name);
    this.#active.delete(name);
  }

  #sweep(): void {
    const { afterSeconds, unregister } = this.#forgetting!;
    const now = performance.now();
    const idleSince = now - afterSeconds * 1000;
    for (let left = this.#active.size; left > 0; left--) {
      const [name, last] = this.#active.entries().next().value!;
      if (last > idleSince) return;
      // Online counts as active: moved to the end, out of the sweep's way.
      if (this.#online.has(name)) this.active(name);
      else unregister(name);
    }
  }

  close(): void {
    clearInterval(this.#timer);
  }
}
