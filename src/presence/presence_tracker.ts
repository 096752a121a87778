/**
 * Counts streams per user; tells the store only of the first and last (docs/architecture.md, "Presence tracker").
 * @module
 */

import type { ChangeFeed, PresenceBoard } from "../store/store.ts";

type TrackedStore = PresenceBoard & ChangeFeed;

/**
 * @example An authenticated stream's life
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore } from "../store/memory_store.ts";
 * import { presenceTrackerOf } from "./presence_tracker.ts";
 * const store = new MemoryStore();
 * await store.registerUser("ann", "t");
 * const tracker = presenceTrackerOf(store);
 * const closeFirst = tracker.streamOpened("ann");
 * const closeSecond = tracker.streamOpened("ann");
 * closeFirst();
 * closeFirst(); // a second call changes nothing
 * assert.deepEqual(store.onlineUsers(), ["ann"]);
 * closeSecond();
 * assert.deepEqual(store.onlineUsers(), []);
 * ```
 */
export class PresenceTracker {
  #store: TrackedStore;
  /** A user's count of streams: replaced when the user is unregistered. */
  #holds = new Map<string, { count: number }>();
  /** Heard only while some stream counts. */
  #stopHearing: (() => void) | undefined;

  constructor(store: TrackedStore) {
    this.#store = store;
  }

  /** Answers the close callback; calls after the first change nothing. */
  streamOpened(name: string): () => void {
    let hold = this.#holds.get(name);
    if (hold === undefined) {
      hold = { count: 0 };
      this.#holds.set(name, hold);
      this.#stopHearing ??= this.#store.subscribe((event) => {
        if (event.kind === "unregistered") this.#drop(event.name);
      });
      this.#store.userOnline(name);
    }
    hold.count++;
    const counted = hold;
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      if (this.#holds.get(name) === counted && --counted.count === 0) {
        this.#drop(name);
      }
    };
  }

  /** Its last one closed, or it was unregistered. */
  #drop(name: string): void {
    if (!this.#holds.delete(name)) return;
    this.#store.userOffline(name);
    if (this.#holds.size === 0) {
      this.#stopHearing?.();
      this.#stopHearing = undefined;
    }
  }
}

const trackers = new WeakMap<TrackedStore, PresenceTracker>();

/**
 * One per store, so two handlers' streams of one user add up rather than take turns.
 *
 * @example Two handlers, one tracker
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore } from "../store/memory_store.ts";
 * import { presenceTrackerOf } from "./presence_tracker.ts";
 * const store = new MemoryStore();
 * assert.equal(presenceTrackerOf(store), presenceTrackerOf(store));
 * ```
 */
export function presenceTrackerOf(store: TrackedStore): PresenceTracker {
  let tracker = trackers.get(store);
  if (tracker === undefined) {
    tracker = new PresenceTracker(store);
    trackers.set(store, tracker);
  }
  return tracker;
}
