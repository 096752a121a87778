/**
 * Who is online, and forgetting idle users, for the memory store: one
 * process holds every stream, so a name is online exactly while this
 * process's presence tracker says it holds one.
 * @module
 */

import { forgetSweepMs, type StoreEvent } from "./store.ts";

/** What forgetting needs: how long, and the store's own unregistering. */
export interface Forgetting {
  /** Idle seconds before a user is forgotten. */
  afterSeconds: number;
  /** Unregisters `name` exactly as `removeUser` does. */
  unregister(name: string): void;
}

/**
 * The online names and, while forgetting, when each user was last active.
 *
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
  /**
   * When each registered user was last active (`performance.now()`), oldest
   * first: every activity moves the name to the end, so a sweep stops at
   * the first name that is not idle. Kept only while forgetting.
   */
  #active = new Map<string, number>();
  #forgetting: Forgetting | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  /** Tells `emit` of every change; forgets idle users when `forgetting` is given. */
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

  /** Whether `name` is online. */
  isOnline(name: string): boolean {
    return this.#online.has(name);
  }

  /** `name` (registered) came online. */
  online(name: string): void {
    if (this.#online.has(name)) return;
    this.#online.add(name);
    this.#emit({ kind: "presence", name, online: true });
  }

  /** `name` went offline: its idle time starts now. */
  offline(name: string): void {
    if (!this.#online.delete(name)) return;
    this.active(name);
    this.#emit({ kind: "presence", name, online: false });
  }

  /** `name` registered or made an authenticated request. */
  active(name: string): void {
    if (this.#forgetting === undefined) return;
    this.#active.delete(name);
    this.#active.set(name, performance.now());
  }

  /** `name` was unregistered: it is neither online nor followed any more. */
  removed(name: string): void {
    this.#online.delete(name);
    this.#active.delete(name);
  }

  /** Unregisters every user idle for the forgetting time, oldest first. */
  #sweep(): void {
    const { afterSeconds, unregister } = this.#forgetting!;
    const now = performance.now();
    const idleSince = now - afterSeconds * 1000;
    // Bounded: each pass moves or removes the first entry, or stops.
    for (let left = this.#active.size; left > 0; left--) {
      const [name, last] = this.#active.entries().next().value!;
      if (last > idleSince) return;
      // Online is active: it goes to the end, so online users do not keep
      // the sweep from reaching idle ones.
      if (this.#online.has(name)) this.active(name);
      else unregister(name);
    }
  }

  /** Stops the sweep. */
  close(): void {
    clearInterval(this.#timer);
  }
}
