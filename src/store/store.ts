/**
 * The interfaces all state lives behind (docs/architecture.md#the-store-interface);
 * a message crosses them as its JSON object text, never parsed.
 * @module
 */

import type { RateLimit } from "./token_buckets.ts";
import {
  checkWithin,
  type WholeLimit,
  type WholeRange,
} from "../limits/whole_range.ts";

/**
 * A value now, or later: the memory store answers synchronously, Redis does not.
 *
 * @example Awaiting either
 * ```ts
 * import assert from "node:assert/strict";
 * import { type Awaitable, MemoryStore } from "@lms/light-messaging";
 * const quote: Awaitable<string> = new MemoryStore().getQuote();
 * assert.equal(await quote, "Not set, yet !");
 * ```
 */
export type Awaitable<T> = T | Promise<T>;

/**
 * The outcome of {@linkcode UserDirectory.registerUser}.
 *
 * @example Registering twice
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore, type RegisterResult } from "@lms/light-messaging";
 * const store = new MemoryStore();
 * const first: RegisterResult = await store.registerUser("ann", "t1");
 * const again: RegisterResult = await store.registerUser("ann", "t2");
 * assert.deepEqual([first, again], ["registered", "exists"]);
 * ```
 */
export type RegisterResult = "registered" | "exists" | "full";

/**
 * Who holds which token: the part of {@linkcode UserDirectory} authentication needs.
 *
 * @example Checking a token
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore, type UserTokens } from "@lms/light-messaging";
 * const store = new MemoryStore();
 * await store.registerUser("ann", "t1");
 * const tokens: UserTokens = store;
 * assert.equal(await tokens.tokenOf("ann"), "t1");
 * tokens.touchUser("ann");
 * ```
 */
export interface UserTokens {
  /** The token stored for `name`, or `undefined` when it is not registered. */
  tokenOf(name: string): Awaitable<string | undefined>;
  /** `name` made an authenticated request: its idle time starts again. Cheap enough for every request. */
  touchUser(name: string): void;
}

/**
 * Failed authentications per client, so that guessing tokens is limited (`--auth-failures`).
 *
 * @example A client that guessed too often waits
 * ```ts
 * import assert from "node:assert/strict";
 * import { type AuthFailures, MemoryStore } from "@lms/light-messaging";
 * const failures: AuthFailures = new MemoryStore();
 * const rate = { burst: 1, periodMs: 1000 };
 * await failures.countAuthFailure("192.0.2.7", rate);
 * assert.ok((await failures.authWait("192.0.2.7", rate, null)).waitMs > 0);
 * assert.equal((await failures.authWait("192.0.2.8", rate, null)).waitMs, 0);
 * ```
 */
export interface AuthFailures {
  /** How long `client` must wait before a credential is checked, in ms; a shared store may judge it (`verdict`). */
  authWait(
    client: string,
    rate: RateLimit,
    credential: { name: string; digest: string } | null,
  ): Awaitable<AuthTry>;
  /** Counts one failure of `client`: 0, or when tries at once took the last, the ms until one is left. */
  countAuthFailure(client: string, rate: RateLimit): Awaitable<number>;
}

/**
 * What {@linkcode AuthFailures.authWait} answers.
 *
 * @example A client that may try, its credential left to the caller
 * ```ts
 * import assert from "node:assert/strict";
 * import { type AuthTry, MemoryStore } from "@lms/light-messaging";
 * const rate = { burst: 1, periodMs: 1000 };
 * const tried: AuthTry = await new MemoryStore().authWait("192.0.2.7", rate, null);
 * assert.deepEqual(tried, { waitMs: 0 });
 * ```
 */
export interface AuthTry {
  /** How long to wait before trying, in ms; 0 when the try may go ahead. */
  waitMs: number;
  /** When the store judged the credential: whether it authenticates (a wrong one is counted already). */
  verdict?: boolean;
}

/** A try that may go ahead, its credential left to the caller. */
export const FREE_TRY: AuthTry = Object.freeze({ waitMs: 0 });

/**
 * The registered users: registering, unregistering, listing.
 *
 * @example Registering and listing
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore, type UserDirectory } from "@lms/light-messaging";
 * const users: UserDirectory = new MemoryStore();
 * await users.registerUser("ann", "t1");
 * assert.deepEqual(await users.listUsers(), ["ann"]);
 * assert.equal(await users.removeUser("ann", "t1"), true);
 * assert.equal(await users.userCount(), 0);
 * ```
 */
export interface UserDirectory extends UserTokens {
  /** Stores `token` for `name` unless it or a look-alike is taken or the store is full; see {@linkcode Allowance}. */
  registerUser(
    name: string,
    token: string,
    allowance?: Allowance,
  ): Awaitable<RegisterResult>;
  /** Removes `name` only while its token is still `token`; `false` when it was not. */
  removeUser(
    name: string,
    token: string,
    allowance?: Allowance,
  ): Awaitable<boolean>;
  /** Every registered name, in registration order; the same array until the set changes. */
  listUsers(): Awaitable<readonly string[]>;
  /** How many users are registered, without listing them. */
  userCount(): Awaitable<number>;
}

/**
 * The messages, each with its id, the newest kept up to the history bound.
 *
 * @example Posting and reading
 * ```ts
 * import assert from "node:assert/strict";
 * import { type MessageLog, MemoryStore } from "@lms/light-messaging";
 * const log: MessageLog = new MemoryStore();
 * assert.equal(await log.addMessage('{"text":"hi"}'), 1);
 * assert.deepEqual(await log.newestMessages(5), ['{"text":"hi"}']);
 * ```
 */
export interface MessageLog {
  /** Inserts a message as the newest, dropping the oldest past the history bound; answers its id (from 1). */
  addMessage(message: string, allowance?: Allowance): Awaitable<number>;
  /** The newest `limit` messages (each its JSON object text), newest first; the same array until a message is added. */
  newestMessages(limit: number): Awaitable<readonly string[]>;
  /** The retained messages above `afterId` (at most the newest `limit`), oldest first, and how many were missed. */
  recentMessages(afterId: number, limit?: number): Awaitable<RecentMessages>;
  /** Up to `limit` retained messages below `before`, newest first, and the next older page's `before`. */
  olderMessages(
    before: number | undefined,
    limit: number,
  ): Awaitable<MessagePage>;
}

/**
 * The one quote.
 *
 * @example Replacing it
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore, type QuoteCell } from "@lms/light-messaging";
 * const quote: QuoteCell = new MemoryStore();
 * await quote.setQuote("Hello!");
 * assert.equal(await quote.getQuote(), "Hello!");
 * ```
 */
export interface QuoteCell {
  /** The current quote. */
  getQuote(): Awaitable<string>;
  /** Replaces the quote. */
  setQuote(quote: string, allowance?: Allowance): Awaitable<void>;
}

/**
 * Every change any process makes, as it is made.
 *
 * @example Hearing a change
 * ```ts
 * import assert from "node:assert/strict";
 * import { type ChangeFeed, MemoryStore } from "@lms/light-messaging";
 * const store = new MemoryStore();
 * const feed: ChangeFeed = store;
 * const kinds: string[] = [];
 * const stop = feed.subscribe((event) => kinds.push(event.kind));
 * store.setQuote("Hello!");
 * stop();
 * assert.deepEqual(kinds, ["quote"]);
 * assert.equal(feed.subscriptionEpoch(), feed.subscriptionEpoch());
 * ```
 */
export interface ChangeFeed {
  /** Calls `listener` with every change any process makes, in order; answers the function that stops it. */
  subscribe(listener: (event: StoreEvent) => void): () => void;
  /** Two equal answers mean listeners missed nothing between them; `undefined` while they may. */
  subscriptionEpoch(): number | undefined;
}

/**
 * Who is online in any process.
 *
 * @example One stream's user
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore, type PresenceBoard } from "@lms/light-messaging";
 * const store = new MemoryStore();
 * await store.registerUser("ann", "t1");
 * const presence: PresenceBoard = store;
 * presence.userOnline("ann");
 * assert.deepEqual(await presence.onlineUsers(), ["ann"]);
 * presence.userOffline("ann");
 * assert.deepEqual(await presence.onlineUsers(), []);
 * ```
 */
export interface PresenceBoard {
  /** `name`'s first stream in this process opened: it is online, if registered. */
  userOnline(name: string): void;
  /** `name`'s last stream in this process closed: offline once no process holds one. */
  userOffline(name: string): void;
  /** The registered users online in any process, in registration order. */
  onlineUsers(): Awaitable<readonly string[]>;
}

/**
 * Whether the store can serve, for `/readyz`.
 *
 * @example Memory is always ready
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore, type StoreHealth } from "@lms/light-messaging";
 * const health: StoreHealth = new MemoryStore();
 * assert.deepEqual(await health.isReady(), { ready: true });
 * ```
 */
export interface StoreHealth {
  /** Whether the store can serve now (Redis: subscribed and taking writes), and why not. */
  isReady(): Awaitable<Readiness>;
}

/**
 * All state, behind one object; whoever opened the store closes it.
 *
 * @example A store that counts its posts
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore, type Store } from "@lms/light-messaging";
 * class CountingStore extends MemoryStore implements Store {
 *   posts = 0;
 *   override addMessage(message: string): number {
 *     this.posts++;
 *     return super.addMessage(message);
 *   }
 * }
 * const store = new CountingStore();
 * store.addMessage('{"text":"hi"}');
 * assert.equal(store.posts, 1);
 * ```
 */
export interface Store
  extends
    UserDirectory,
    AuthFailures,
    MessageLog,
    QuoteCell,
    ChangeFeed,
    PresenceBoard,
    StoreHealth {
  /** Releases connections and timers; the store is unusable afterwards. */
  close(): Promise<void>;
}

/**
 * Whether a store can serve, and when not, why (for operators: `/readyz`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore, type Readiness } from "@lms/light-messaging";
 * const readiness: Readiness = new MemoryStore().isReady();
 * assert.deepEqual(readiness, { ready: true });
 * ```
 */
export type Readiness = { ready: true } | { ready: false; reason: string };

/**
 * A stored message with its id.
 *
 * @example The first message
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore, type StoredMessage } from "@lms/light-messaging";
 * const store = new MemoryStore();
 * store.addMessage('{"text":"hi"}');
 * const [first]: StoredMessage[] = (await store.recentMessages(0)).messages;
 * assert.deepEqual(first, { id: 1, json: '{"text":"hi"}' });
 * ```
 */
export interface StoredMessage {
  /** Its place in the order of storing: 1, 2, 3, ... */
  id: number;
  /** The message as `GET /` shows it: JSON object text. */
  json: string;
}

/**
 * What {@linkcode MessageLog.recentMessages} answers.
 *
 * @example Catching up after message 7
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore, type RecentMessages } from "@lms/light-messaging";
 * const store = new MemoryStore({ history: 5 });
 * for (let i = 1; i <= 20; i++) store.addMessage(JSON.stringify({ text: `${i}` }));
 * const recent: RecentMessages = await store.recentMessages(7);
 * // Ids 8 to 15 have left the history of 5; 16 to 20 are sent.
 * assert.equal(recent.missed, 8);
 * assert.deepEqual(recent.messages.map((m) => m.id), [16, 17, 18, 19, 20]);
 * assert.equal(recent.newestId, 20);
 * ```
 */
export interface RecentMessages {
  /** Oldest first. */
  messages: StoredMessage[];
  /** The newest id ever given; 0 before the first message. */
  newestId: number;
  /** How many messages above the id asked for are no longer retained (or were lost by the store). */
  missed: number;
}

/**
 * What {@linkcode MessageLog.olderMessages} answers.
 *
 * @example Paging back two at a time
 * ```ts
 * import assert from "node:assert/strict";
 * import { type MessagePage, MemoryStore } from "@lms/light-messaging";
 * const store = new MemoryStore();
 * for (const text of ["a", "b", "c", "d", "e"]) {
 *   store.addMessage(JSON.stringify({ text }));
 * }
 * const first: MessagePage = await store.olderMessages(undefined, 2);
 * assert.deepEqual(first.messages.map((m) => m.id), [5, 4]);
 * assert.equal(first.next, 4);
 * const last = await store.olderMessages(2, 2);
 * assert.deepEqual(last.messages.map((m) => m.id), [1]);
 * assert.equal(last.next, null);
 * ```
 */
export interface MessagePage {
  /** Newest first, each with its id. */
  messages: StoredMessage[];
  /** The oldest id answered, when older messages are retained; else `null`. */
  next: number | null;
}

/**
 * A change; `reset` when the store cannot vouch that none was missed, so readers start again.
 *
 * @example Following changes
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore, type StoreEvent } from "@lms/light-messaging";
 * const store = new MemoryStore();
 * const seen: StoreEvent[] = [];
 * store.subscribe((event) => seen.push(event));
 * store.setQuote("Hello!");
 * assert.deepEqual(seen, [{ kind: "quote", quote: "Hello!" }]);
 * ```
 */
export type StoreEvent =
  | { kind: "message"; id: number; json: string }
  | { kind: "quote"; quote: string }
  | { kind: "presence"; name: string; online: boolean }
  | { kind: "unregistered"; name: string }
  | { kind: "reset" };

/**
 * Limits every store enforces.
 *
 * @example A small store
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore, type StoreLimits } from "@lms/light-messaging";
 * const limits: StoreLimits = { history: 10, maxUsers: 1 };
 * const store = new MemoryStore(limits);
 * assert.equal(store.registerUser("ann", "t1"), "registered");
 * assert.equal(store.registerUser("bob", "t2"), "full");
 * ```
 */
export interface StoreLimits {
  /** How many messages are kept: 5 to 10,000,000. Default 100. */
  history?: number;
  /** How many users may be registered at once: 1 to 100,000,000. Default 100,000. */
  maxUsers?: number;
  /** Unregisters a user offline and idle for this many seconds: 1 to 31,536,000. Default: never. */
  forgetUsersAfter?: number;
}

/** The heartbeat of quiet streams and (Redis) presence records, in ms; under 10 ms a core stays busy. */
export const HEARTBEAT_MS = {
  default: 15_000,
  min: 10,
  max: 3_600_000,
} as const satisfies WholeLimit;

/** The range of {@linkcode StoreLimits.forgetUsersAfter}, in seconds: up to a year. */
export const FORGET_USERS_AFTER: WholeRange = { min: 1, max: 31_536_000 };

/** How often to look for users idle `afterSeconds`: a tenth of it (at most 10% late), 50 ms to a minute. */
export function forgetSweepMs(afterSeconds: number): number {
  return Math.min(60_000, Math.max(50, afterSeconds * 100));
}

/** The default and range of each of {@linkcode StoreLimits}; the program's flags take the same. */
export const STORE_LIMITS = {
  history: { default: 100, min: 5, max: 10_000_000 },
  maxUsers: { default: 100_000, min: 1, max: 100_000_000 },
} as const satisfies Record<"history" | "maxUsers", WholeLimit>;

/** {@linkcode StoreLimits} with the defaults filled in; `forgetUsersAfter` stays absent when off. */
export type ResolvedLimits = Required<Omit<StoreLimits, "forgetUsersAfter">> & {
  forgetUsersAfter?: number;
};

/** Validates a limit shared by every store implementation. */
export function resolveLimits(limits: StoreLimits): ResolvedLimits {
  const { history, maxUsers } = STORE_LIMITS;
  const forget = limits.forgetUsersAfter;
  return {
    forgetUsersAfter: forget === undefined
      ? undefined
      : checkWithin("forgetUsersAfter", FORGET_USERS_AFTER, forget),
    history: checkWithin("history", history, limits.history ?? history.default),
    maxUsers: checkWithin(
      "maxUsers",
      maxUsers,
      limits.maxUsers ?? maxUsers.default,
    ),
  };
}

/** The quote before anyone has set one. */
export const INITIAL_QUOTE = "Not set, yet !";

/**
 * Thrown by a store whose backend cannot be reached; answered 503.
 *
 * @example A store that is down
 * ```ts
 * import { MemoryStore, StoreUnavailableError } from "@lms/light-messaging";
 * class DownStore extends MemoryStore {
 *   override getQuote(): string {
 *     throw new StoreUnavailableError("the disk is on fire");
 *   }
 * }
 * ```
 */
export class StoreUnavailableError extends Error {
  /** Wraps the backend's own error as the cause. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StoreUnavailableError";
  }
}

/**
 * A client's rate limit, spent in the write's own step or the write throws {@linkcode RateLimited}.
 *
 * @example Five writes at once, then one every ten seconds
 * ```ts
 * import assert from "node:assert/strict";
 * import { type Allowance, MemoryStore, RateLimited } from "@lms/light-messaging";
 * const allowance: Allowance = { client: "192.0.2.7", rate: { burst: 5, periodMs: 10_000 } };
 * const store = new MemoryStore();
 * for (let i = 0; i < 5; i++) await store.setQuote("Hello!", allowance);
 * assert.throws(() => store.setQuote("Sixth!", allowance), RateLimited);
 * ```
 */
export interface Allowance {
  /** Who writes: the client's address, as the rate limit knows clients. */
  client: string;
  /** How many writes the client may make. */
  rate: RateLimit;
}

/**
 * Thrown by a write whose client has no allowance left; nothing was written.
 *
 * @example Refused
 * ```ts
 * import { MemoryStore, RateLimited } from "@lms/light-messaging";
 * const store = new MemoryStore();
 * const allowance = { client: "c", rate: { burst: 1, periodMs: 60_000 } };
 * import assert from "node:assert/strict";
 * await store.setQuote("One.", allowance);
 * await assert.rejects(
 *   async () => await store.setQuote("Two.", allowance),
 *   (error) => error instanceof RateLimited && error.waitMs > 0,
 * );
 * assert.equal(await store.getQuote(), "One.");
 * ```
 */
export class RateLimited extends Error {
  /** A refusal for `waitMs` under `rate`. */
  constructor(
    /** How long until the client may write again, in milliseconds. */
    readonly waitMs: number,
    /** The rate the client ran out of. */
    readonly rate: RateLimit,
  ) {
    super(`rate limited: retry in ${waitMs} ms`);
    this.name = "RateLimited";
  }
}
