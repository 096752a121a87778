/**
 * The listeners of a store's changes, for every store implementation.
 * @module
 */

import type { StoreEvent } from "./store.ts";

/** A set of listeners, told of every change in order. */
export class ChangeListeners {
  #listeners = new Set<(event: StoreEvent) => void>();

  /** Answers the function that removes it. */
  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  emit(event: StoreEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}
