/**
 * State in Redis, shared by any number of processes. Every operation is one
 * atomic Redis step (a command or a Lua script), so processes never need
 * to coordinate among themselves.
 *
 * Reads of the newest messages, the quote and the user list, and the token
 * check of authenticated requests, are served from local copies that are
 * dropped whenever any process writes: writers publish a change notice
 * inside the same script as the write, and every process subscribes to it.
 * Every command is bounded in time and number (`command_gate.ts`), and
 * every write is settled before it is answered (`settled_writes.ts`).
 *
 * This is the package's `./redis` entry: importing the main entry never
 * loads the Redis client.
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
  /**
   * `redis://[user:password@]host:port[/db]`, or
   * `redis+sentinel://[user:password@]host:port[,host:port...]/master-name[/db]`
   * to find the master through Redis Sentinel and follow its failovers.
   */
  url: string;
  /** Prepended to every key and the change channel, so deployments can share a server. Default `lms:`. */
  prefix?: string;
  /**
   * How long one read may wait for its reply before the request is answered
   * 503 (checked every quarter of it, so the answer comes between 1 and 1.25
   * times this), and how long after it is sent a write may still take
   * effect. A write is answered once its outcome is known. Default 1,000 ms.
   */
  commandTimeoutMs?: number;
  /** How many commands may wait for Redis at once; past it requests are answered 503 at once and nothing is queued. Default 1,000. */
  maxPendingCommands?: number;
  /** How long a connection attempt may take. Default 2,000 ms. */
  connectTimeoutMs?: number;
  /**
   * How many replicas must hold a write (Redis's `WAIT`) before it is
   * answered; until they do, it waits, and new writes are answered 503.
   * Default 0: a write is answered as soon as the master has it.
   */
  waitReplicas?: number;
  /** Told when the connection is lost (`error`) or restored (`info`). Default: a line on standard error. */
  onStatus?: (message: string, level: "error" | "info") => void;
  /**
   * The event streams' heartbeat (`--heartbeat-ms`), 10 to 3,600,000 ms:
   * this process refreshes its presence record every quarter of it, and
   * when the process dies its users go offline within 2.25 times it.
   * Default 15,000.
   */
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

  /** Connects, failing fast with a clear error when Redis cannot be reached. */
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
    // Loaded here, not imported, so that importing (or documenting) the
    // store does not load node-redis.
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

  /** Stores the user unless taken or full, in one script. */
  registerUser(
    name: string,
    token: string,
    allowance?: Allowance,
  ): Promise<RegisterResult> {
    return this.#users.registerUser(name, token, allowance);
  }

  /** The token of `name`, if registered: from the kept tokens while they are current, else from Redis. */
  tokenOf(name: string): Awaitable<string | undefined> {
    return this.#users.tokenOf(name);
  }

  /** Removes `name` while its token is still `token`, in one script. */
  removeUser(
    name: string,
    token: string,
    allowance?: Allowance,
  ): Promise<boolean> {
    return this.#users.removeUser(name, token, allowance);
  }

  /** Names in registration order, from the local copy while it is current. */
  listUsers(): Awaitable<string[]> {
    return this.#users.listUsers();
  }

  /** How many users are registered (`HLEN`), without listing them. */
  userCount(): Promise<number> {
    return this.#users.userCount();
  }

  /** Notes that `name` was active; sent to Redis before this process's next sweep. */
  touchUser(name: string): void {
    this.#users.touchUser(name);
  }

  /** How long `client` must wait before authenticating again, as every process counts. */
  authWait(client: string, rate: RateLimit): number {
    return this.#authFailures.authWait(client, rate);
  }

  /** Counts one failed authentication of `client` in Redis, shared by every process. */
  countAuthFailure(client: string, rate: RateLimit): Promise<void> {
    return this.#authFailures.countAuthFailure(client, rate);
  }

  /** This process holds a stream of `name`: told to Redis in the background. */
  userOnline(name: string): void {
    this.#presence.online(name);
  }

  /** This process holds no stream of `name` any more: told to Redis in the background. */
  userOffline(name: string): void {
    this.#presence.offline(name);
  }

  /** The registered names online anywhere, in registration order, from local copies while they are current. */
  onlineUsers(): Awaitable<readonly string[]> {
    const users = this.listUsers();
    const online = this.#presence.onlineNames();
    const both = (list: readonly string[], names: ReadonlySet<string>) =>
      list.filter((name) => names.has(name));
    return users instanceof Promise || online instanceof Promise
      ? Promise.all([users, online]).then(([list, names]) => both(list, names))
      : both(users, online);
  }

  /** Inserts the message with the next id, trims to the history bound and tells every process, in one script. */
  addMessage(message: string, allowance?: Allowance): Promise<number> {
    return this.#messages.addMessage(message, allowance);
  }

  /** The newest `limit` messages, newest first, from the local copy while it is current. */
  newestMessages(limit: number): Awaitable<readonly string[]> {
    return this.#messages.newestMessages(limit);
  }

  /** The retained messages with an id above `afterId`, oldest first, in one round trip. */
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

  /** The current quote. */
  getQuote(): Awaitable<string> {
    return this.#quote.getQuote();
  }

  /** Replaces the quote and tells every process, in one script. */
  setQuote(quote: string, allowance?: Allowance): Promise<void> {
    return this.#quote.setQuote(quote, allowance);
  }

  /** Tells `listener` of every change any process makes, in id order for messages. */
  subscribe(listener: (event: StoreEvent) => void): () => void {
    return this.#kernel.subscribe(listener);
  }

  /** The subscription's epoch while it is up; `undefined` while it is down. */
  subscriptionEpoch(): number | undefined {
    return this.#kernel.subscriptionEpoch();
  }

  /**
   * Whether this process can serve everything, and why not: its
   * subscription is up, and Redis takes a write within the command timeout.
   */
  isReady(): Promise<Readiness> {
    return this.#kernel.isReady();
  }

  /** Drops this process's presence (its users go offline now), then closes both connections; writes still unsettled give up. */
  async close(): Promise<void> {
    await this.#presence.close();
    await this.#kernel.close();
  }
}
