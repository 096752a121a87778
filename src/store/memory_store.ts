/**
 * The default store: state in this process's memory, lost on restart.
 * @module
 */

import { lookOf } from "../identity/name_skeleton.ts";
import { ChangeListeners } from "./change_listeners.ts";
import {
  type Allowance,
  type AuthTry,
  forgetSweepMs,
  FREE_TRY,
  INITIAL_QUOTE,
  type MessagePage,
  RateLimited,
  type Readiness,
  type RecentMessages,
  type RegisterResult,
  resolveLimits,
  type Store,
  type StoreEvent,
  type StoreLimits,
} from "./store.ts";
import { Ring } from "./ring.ts";
import { type RateLimit, TokenBuckets } from "./token_buckets.ts";

/**
 * Keeps users, messages and the quote in memory.
 *
 * @example A store with a longer history
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler, MemoryStore } from "@lms/light-messaging";
 * const store = new MemoryStore({ history: 1000, maxUsers: 10 });
 * const handler = createHandler({ store });
 * store.setQuote("Kept in memory.");
 * const res = await handler(new Request("http://localhost/quote"));
 * assert.equal(await res.json(), "Kept in memory.");
 * ```
 */
export class MemoryStore implements Store {
  #users = new Map<string, string>();
  /** The skeletons of the registered names: one look, one name. */
  #looks = new Set<string>();
  #userList: readonly string[] | undefined;
  #messages: Ring;
  #maxUsers: number;
  #quote = INITIAL_QUOTE;
  // GET /'s hot read, built once per post: one slot, not a churning Map (docs/architecture.md#one-timer-for-many-waits).
  #newest: { limit: number; messages: readonly string[] } | undefined;
  /** Ids are consecutive: the ring holds `#lastId - size + 1` to `#lastId`. */
  #lastId = 0;
  #listeners = new ChangeListeners();
  #buckets = new TokenBuckets();
  #authFailures = new TokenBuckets();
  #online = new Set<string>();
  /** Last activity when forgetting, oldest first, so a sweep stops at the first not idle. */
  #active = new Map<string, number>();
  #forgetAfterMs: number | undefined;
  #sweeper: ReturnType<typeof setInterval> | undefined;

  /** Makes an empty store with the given limits. */
  constructor(limits: StoreLimits = {}) {
    const { history, maxUsers, forgetUsersAfter } = resolveLimits(limits);
    this.#messages = new Ring(history);
    this.#maxUsers = maxUsers;
    if (forgetUsersAfter !== undefined) {
      this.#forgetAfterMs = forgetUsersAfter * 1000;
      this.#sweeper = setInterval(
        () => this.#sweep(),
        forgetSweepMs(forgetUsersAfter),
      );
    }
  }

  registerUser(
    name: string,
    token: string,
    allowance?: Allowance,
  ): RegisterResult {
    this.#spend(allowance);
    if (this.#users.has(name)) return "exists";
    if (this.#users.size >= this.#maxUsers) return "full";
    const look = lookOf(name);
    if (this.#looks.has(look)) return "exists";
    this.#looks.add(look);
    this.#users.set(name, token);
    this.#userList = undefined;
    this.#noteActive(name);
    return "registered";
  }

  tokenOf(name: string): string | undefined {
    return this.#users.get(name);
  }

  removeUser(name: string, token: string, allowance?: Allowance): boolean {
    this.#spend(allowance);
    if (this.#users.get(name) !== token) return false;
    this.#unregister(name);
    return true;
  }

  #unregister(name: string): void {
    this.#users.delete(name);
    this.#looks.delete(lookOf(name));
    this.#userList = undefined;
    this.#online.delete(name);
    this.#active.delete(name);
    this.#listeners.emit({ kind: "unregistered", name });
  }

  /** Names in registration order, rebuilt only after a change. */
  listUsers(): readonly string[] {
    return this.#userList ??= [...this.#users.keys()];
  }

  userCount(): number {
    return this.#users.size;
  }

  userOnline(name: string): void {
    if (!this.#users.has(name) || this.#online.has(name)) return;
    this.#online.add(name);
    this.#listeners.emit({ kind: "presence", name, online: true });
  }

  /** Its idle time starts now. */
  userOffline(name: string): void {
    if (!this.#online.delete(name)) return;
    this.#noteActive(name);
    this.#listeners.emit({ kind: "presence", name, online: false });
  }

  onlineUsers(): readonly string[] {
    return this.listUsers().filter((name) => this.#online.has(name));
  }

  touchUser(name: string): void {
    if (this.#users.has(name)) this.#noteActive(name);
  }

  #noteActive(name: string): void {
    if (this.#forgetAfterMs === undefined) return;
    this.#active.delete(name);
    this.#active.set(name, performance.now());
  }

  #sweep(): void {
    const idleSince = performance.now() - this.#forgetAfterMs!;
    for (let left = this.#active.size; left > 0; left--) {
      const [name, last] = this.#active.entries().next().value!;
      if (last > idleSince) return;
      // Online counts as active: moved to the end, out of the sweep's way.
      if (this.#online.has(name)) this.#noteActive(name);
      else this.#unregister(name);
    }
  }

  addMessage(message: string, allowance?: Allowance): number {
    this.#spend(allowance);
    this.#messages.push(message);
    this.#newest = undefined;
    const id = ++this.#lastId;
    this.#listeners.emit({ kind: "message", id, json: message });
    return id;
  }

  recentMessages(afterId: number, limit = Infinity): RecentMessages {
    const retained = this.#messages.size;
    const firstRetained = this.#lastId - retained + 1;
    const wanted = Math.max(0, this.#lastId - Math.max(afterId, 0));
    const count = Math.min(wanted, retained, limit);
    const messages = this.#messages.oldestFirst(count).map((json, i) => ({
      id: this.#lastId - count + 1 + i,
      json,
    }));
    return {
      messages,
      newestId: this.#lastId,
      missed: Math.max(0, Math.min(wanted, firstRetained - 1 - afterId)),
    };
  }

  olderMessages(before: number | undefined, limit: number): MessagePage {
    const firstRetained = this.#lastId - this.#messages.size + 1;
    const top = Math.min(this.#lastId, (before ?? Infinity) - 1);
    const count = Math.max(0, Math.min(limit, top - firstRetained + 1));
    const messages = this.#messages.newestAfter(this.#lastId - top, count)
      .map((json, i) => ({ id: top - i, json }));
    const oldest = top - count + 1;
    return {
      messages,
      next: count > 0 && oldest > firstRetained ? oldest : null,
    };
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    return this.#listeners.subscribe(listener);
  }

  /** Always the same: every change is told as it is made. */
  subscriptionEpoch(): number | undefined {
    return 0;
  }

  newestMessages(limit: number): readonly string[] {
    if (this.#newest?.limit !== limit) {
      this.#newest = { limit, messages: this.#messages.newestAfter(0, limit) };
    }
    return this.#newest.messages;
  }

  getQuote(): string {
    return this.#quote;
  }

  setQuote(quote: string, allowance?: Allowance): void {
    this.#spend(allowance);
    this.#quote = quote;
    this.#listeners.emit({ kind: "quote", quote });
  }

  #spend(allowance: Allowance | undefined): void {
    if (allowance === undefined) return;
    const wait = this.#buckets.take(allowance.client, allowance.rate);
    if (wait > 0) throw new RateLimited(wait, allowance.rate);
  }

  /** How long `client` must wait before authenticating again, in ms; the credential is left to the caller. */
  authWait(client: string, rate: RateLimit, _credential?: unknown): AuthTry {
    const waitMs = this.#authFailures.waitOf(client, rate);
    return waitMs === 0 ? FREE_TRY : { waitMs };
  }

  countAuthFailure(client: string, rate: RateLimit): number {
    return this.#authFailures.take(client, rate);
  }

  isReady(): Readiness {
    return { ready: true };
  }

  /** Stops forgetting idle users. */
  close(): Promise<void> {
    clearInterval(this.#sweeper);
    return Promise.resolve();
  }
}
