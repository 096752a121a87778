/**
 * One presence event per user per interval, or a client churning its streams costs every reader
 * two events a stream; the last state is told as the interval ends, if not told already.
 * @module
 */

import { Deadlines } from "../timers/deadlines.ts";

export const PRESENCE_PACE_MS = 1000;

interface Window {
  readonly name: string;
  told: boolean;
  latest: boolean;
}

/**
 * @example Churn told once, then its end
 * ```ts
 * import assert from "node:assert/strict";
 * import { PresencePacing } from "./presence_pacing.ts";
 * const told: string[] = [];
 * const pacing = new PresencePacing(20, (name, online) => told.push(`${name} ${online}`));
 * for (let i = 0; i < 10; i++) {
 *   pacing.change("ann", true);
 *   pacing.change("ann", false);
 * }
 * assert.deepEqual(told, ["ann true"]);
 * await new Promise((resolve) => setTimeout(resolve, 60));
 * assert.deepEqual(told, ["ann true", "ann false"]);
 * pacing.close();
 * ```
 */
export class PresencePacing {
  #tell: (name: string, online: boolean) => void;
  #windows = new Map<string, Window>();
  #deadlines: Deadlines<Window>;

  constructor(paceMs: number, tell: (name: string, online: boolean) => void) {
    this.#tell = tell;
    this.#deadlines = new Deadlines(paceMs, (window) => this.#end(window));
  }

  change(name: string, online: boolean): void {
    const window = this.#windows.get(name);
    if (window !== undefined) {
      window.latest = online;
      return;
    }
    const opened = { name, told: online, latest: online };
    this.#windows.set(name, opened);
    this.#deadlines.add(opened);
    this.#tell(name, online);
  }

  /** `name` was unregistered: what waits for it is not told. */
  forget(name: string): void {
    this.#windows.delete(name);
  }

  /** Tells nothing more and stops its timer. */
  close(): void {
    this.#windows.clear();
    this.#deadlines.close();
  }

  #end(window: Window): void {
    // Forgotten, and perhaps opened anew since.
    if (this.#windows.get(window.name) !== window) return;
    this.#windows.delete(window.name);
    if (window.latest !== window.told) this.change(window.name, window.latest);
  }
}
