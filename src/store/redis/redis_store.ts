/**
 * State in Redis, shared by any number of processes: every operation is one atomic step, and
 * reads come from local copies dropped on every change notice (docs/redis.md). A separate entry
 * so that importing the main one never loads the Redis client.
 *
 * @example Sharing state between processes
 * ```ts
 * import { createHandler } from "@lms/light-messaging";
 * import { RedisStore } from "@lms/light-messaging/redis";
 * const store = await RedisStore.connect({ url: "redis://127.0.0.1:6379/0" });
 * Deno.serve(createHandler({ store }));
 * ```
 * @module
 */

import {
  type Allowance,
  type AuthTry,
  type Awaitable,
  HEARTBEAT_MS,
  type MessagePage,
  type Readiness,
  type RecentMessages,
  type RegisterResult,
  resolveLimits,
  type Store,
  type StoreEvent,
  type StoreLimits,
} from "../store.ts";
import { checkWithin } from "../../limits/whole_range.ts";
import { RedisPresence } from "./presence.ts";
import type { RedisConnection } from "./redis_connection.ts";
import { RedisKernel } from "./kernel.ts";
import { RedisUsers } from "./users.ts";
import { RedisMessages } from "./messages.ts";
import { RedisQuote } from "./quote.ts";
import { RedisAuthFailures } from "./auth_failures.ts";
import type { RateLimit } from "../token_buckets.ts";

/**
 * Options of {@linkcode RedisStore.connect}.
 *
 * @example A store with its own key prefix
 * ```ts
 * import type { RedisStoreOptions } from "@lms/light-messaging/redis";
 * const options: RedisStoreOptions = { url: "redis://127.0.0.1:6379/0", prefix: "chat:" };
 * ```
 */
export interface RedisStoreOptions extends StoreLimits {
  /** `redis://[user:password@]host:port[/db]` or `redis+sentinel://[user:password@]host:port[,...]/master-name[/db]`. */
  url: string;
  /** Prepended to every key and the change channel, so deployments can share a server. Default `lms:`. */
  prefix?: string;
  /** How long a read waits (answered 503 within 1.25 times this) and a write may still take effect. Default 1,000 ms. */
  commandTimeoutMs?: number;
  /** Commands waiting at once; past it, 503 at once and nothing is queued. Default 1,000. */
  maxPendingCommands?: number;
  /** Connection attempt timeout. Default 2,000 ms. */
  connectTimeoutMs?: number;
  /** Replicas that must hold a write (`WAIT`) before it is answered. Default 0. */
  waitReplicas?: number;
  /** Told when the connection is lost or restored. Default: a line on standard error. */
  onStatus?: (message: string, level: "error" | "info") => void;
  /** `--heartbeat-ms`: presence is refreshed every quarter of it; a dead process's users go offline within 2.25 times it. Default 15,000. */
  heartbeatMs?: number;
}

/**
 * Keeps users, messages and the quote in Redis.
 *
 * @example Connecting
 * ```ts
 * import { RedisStore } from "@lms/light-messaging/redis";
 * const store = await RedisStore.connect({ url: "redis://127.0.0.1:6379/0" });
 * console.log(await store.getQuote());
 * await store.close();
 * ```
 */
export class RedisStore implements Store {
  #kernel: RedisKernel;
  #users: RedisUsers;
  #messages: RedisMessages;
  #quote: RedisQuote;
  #presence: RedisPresence;
  #authFailures: RedisAuthFailures;

  private constructor(
    client: RedisConnection,
    subscriber: RedisConnection,
    options: RedisStoreOptions,
  ) {
    const limits = resolveLimits(options);
    const kernel = new RedisKernel(client, subscriber, {
      prefix: options.prefix ?? "lms:",
      timeoutMs: options.commandTimeoutMs ?? 1000,
      maxPending: options.maxPendingCommands ?? 1000,
      replicas: options.waitReplicas ?? 0,
    });
    this.#kernel = kernel;
    this.#presence = new RedisPresence({
      client,
      gate: kernel.gate,
      keys: kernel.keys,
      subscription: kernel.subscription,
      heartbeatMs: options.heartbeatMs ?? HEARTBEAT_MS.default,
      forgetUsersAfter: limits.forgetUsersAfter,
    });
    kernel.onNotice((notice) => {
      const kind = notice.kind;
      if (kind === "removed" || kind === "online" || kind === "offline") {
        this.#presence.changed();
      }
    });
    this.#users = new RedisUsers(
      kernel,
      limits.maxUsers,
      (name) => this.#presence.touch(name),
    );
    this.#messages = new RedisMessages(kernel, limits.history);
    this.#quote = new RedisQuote(kernel);
    this.#authFailures = new RedisAuthFailures(kernel);
  }

  /** Fails fast with a clear error when Redis cannot be reached. */
  static async connect(options: RedisStoreOptions): Promise<RedisStore> {
    resolveLimits(options);
    checkWithin(
      "heartbeatMs",
      HEARTBEAT_MS,
      options.heartbeatMs ?? HEARTBEAT_MS.default,
    );
    const connection = {
      url: options.url,
      connectTimeoutMs: options.connectTimeoutMs ?? 2000,
      report: options.onStatus ??
        ((message: string) => console.error(message)),
    };
    // Loaded, not imported, so importing or documenting the store does not load node-redis.
    const { connect } = await import("./connection.ts");
    const client = await connect(connection, "commands");
    let subscriber: RedisConnection;
    try {
      subscriber = await connect(connection, "changes");
    } catch (error) {
      await client.close();
      throw error;
    }
    const store = new RedisStore(client, subscriber, options);
    try {
      await store.#kernel.start();
      await store.#users.convertEarlier();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /** In one script. */
  registerUser(
    name: string,
    token: string,
    allowance?: Allowance,
  ): Promise<RegisterResult> {
    return this.#users.registerUser(name, token, allowance);
  }

  /** From the kept tokens while they are current. */
  tokenOf(name: string): Awaitable<string | undefined> {
    return this.#users.tokenOf(name);
  }

  /** While its token is still `token`, in one script. */
  removeUser(
    name: string,
    token: string,
    allowance?: Allowance,
  ): Promise<boolean> {
    return this.#users.removeUser(name, token, allowance);
  }

  /** From the local copy while it is current. */
  listUsers(): Awaitable<string[]> {
    return this.#users.listUsers();
  }

  userCount(): Promise<number> {
    return this.#users.userCount();
  }

  /** Sent to Redis before this process's next sweep. */
  touchUser(name: string): void {
    this.#users.touchUser(name);
  }

  /** How long `client` must wait before authenticating again, as every process counts. */
  authWait(
    client: string,
    rate: RateLimit,
    credential: { name: string; digest: string } | null,
  ): Awaitable<AuthTry> {
    return this.#authFailures.authWait(client, rate, credential);
  }

  /** Counts one failed authentication of `client` in Redis, shared by every process. */
  countAuthFailure(client: string, rate: RateLimit): Promise<number> {
    return this.#authFailures.countAuthFailure(client, rate);
  }

  /** Told to Redis in the background. */
  userOnline(name: string): void {
    this.#presence.online(name);
  }

  /** Told to Redis in the background. */
  userOffline(name: string): void {
    this.#presence.offline(name);
  }

  /** From local copies while they are current. */
  onlineUsers(): Awaitable<readonly string[]> {
    const users = this.listUsers();
    const online = this.#presence.onlineNames();
    const both = (list: readonly string[], names: ReadonlySet<string>) =>
      list.filter((name) => names.has(name));
    return users instanceof Promise || online instanceof Promise
      ? Promise.all([users, online]).then(([list, names]) => both(list, names))
      : both(users, online);
  }

  /** Insert, trim and notice in one script. */
  addMessage(message: string, allowance?: Allowance): Promise<number> {
    return this.#messages.addMessage(message, allowance);
  }

  /** From the local copy while it is current. */
  newestMessages(limit: number): Awaitable<readonly string[]> {
    return this.#messages.newestMessages(limit);
  }

  /** In one round trip. */
  recentMessages(afterId: number, limit?: number): Promise<RecentMessages> {
    return this.#messages.recentMessages(afterId, limit);
  }

  /** A page of the history below `before`, newest first, in one round trip. */
  olderMessages(
    before: number | undefined,
    limit: number,
  ): Promise<MessagePage> {
    return this.#messages.olderMessages(before, limit);
  }

  getQuote(): Awaitable<string> {
    return this.#quote.getQuote();
  }

  /** Replace and notice in one script. */
  setQuote(quote: string, allowance?: Allowance): Promise<void> {
    return this.#quote.setQuote(quote, allowance);
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    return this.#kernel.subscribe(listener);
  }

  subscriptionEpoch(): number | undefined {
    return this.#kernel.subscriptionEpoch();
  }

  /** Ready when subscribed and Redis takes a write within the command timeout. */
  isReady(): Promise<Readiness> {
    return this.#kernel.isReady();
  }

  /** Drops this process's presence, then closes both connections; unsettled writes give up. */
  async close(): Promise<void> {
    await this.#presence.close();
    await this.#kernel.close();
  }
}
