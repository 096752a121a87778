/**
 * The seam between live streams and presence. Whatever carries a reader
 * (an event stream opened with `X-Messaging-Token`, a WebSocket that sent
 * its token) tells the tracker when a stream authenticated as a user opens,
 * and calls back once when it closes; the tracker counts them per user and
 * tells the store when a user's first stream in this process opens and its
 * last one closes (`PresenceBoard.userOnline` / `PresenceBoard.userOffline`), which is
 * where processes are added up.
 *
 * When a user is unregistered, the streams opened as them stop counting:
 * they stay open (their readers hear `registered: false`), and closing
 * them later changes nothing, so a new user of the same name starts from
 * none.
 * @module
 */

import type { ChangeFeed, PresenceBoard } from "../store/store.ts";

/** What the tracker tells and hears: presence, and unregistrations. */
type TrackedStore = PresenceBoard & ChangeFeed;

/**
 * Counts this process's authenticated streams per user.
 *
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
export interface PresenceTracker {
  /**
   * A stream authenticated as `name` opened in this process; answers the
   * function to call when it closes (calls after the first change nothing).
   */
  streamOpened(name: string): () => void;
}

/** One user's streams in this process; replaced when the user is unregistered. */
interface Hold {
  count: number;
}

class CountingTracker implements PresenceTracker {
  #store: TrackedStore;
  #holds = new Map<string, Hold>();
  /** Stops hearing of unregistrations: heard only while some stream counts. */
  #stopHearing: (() => void) | undefined;

  constructor(store: TrackedStore) {
    this.#store = store;
  }

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

  /** Stops counting `name`'s streams: its last one closed, or it was unregistered. */
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
 * The tracker of `store` in this process: one per store, however many
 * handlers are built over it, so that two handlers' streams of one user
 * add up rather than take turns.
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
    tracker = new CountingTracker(store);
    trackers.set(store, tracker);
  }
  return tracker;
}
