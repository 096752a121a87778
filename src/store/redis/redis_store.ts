/**
 * State in Redis, shared by any number of processes. Every operation is one
 * atomic Redis step (a command, a Lua script or a MULTI), so processes never
 * need to coordinate among themselves.
 *
 * Reads of the newest messages, the quote and the user list, and the token
 * check of authenticated requests, are served from local copies that are
 * dropped whenever any process writes: writers publish on a channel inside
 * the same transaction as the write, and every process subscribes to it.
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
  type Awaitable,
  INITIAL_QUOTE,
  type RegisterResult,
  resolveLimits,
  type Store,
  type StoreLimits,
  StoreUnavailableError,
} from "../store.ts";
import { KeptTokens, LocalCopy, type Subscription } from "./local_copy.ts";
import type { RedisConnection } from "./redis_connection.ts";
import { REMOVED } from "./scripts.ts";

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
  /** `redis://[user:password@]host:port[/db]`. */
  url: string;
  /** Prepended to every key and the change channel, so deployments can share a server. Default `lms:`. */
  prefix?: string;
  /** How long one command may wait for its reply before the request is answered 503. Default 1,000 ms. */
  commandTimeoutMs?: number;
  /** How long a connection attempt may take. Default 2,000 ms. */
  connectTimeoutMs?: number;
  /** Told when the connection is lost or restored. Default: a line on standard error. */
  onStatus?: (message: string) => void;
}

/** The shared values a process keeps a copy of, named as the change channel names them. */
type Shared = { messages: string; quote: string; users: string[] };

function keysOf(prefix: string) {
  return {
    users: `${prefix}users`,
    order: `${prefix}users:order`,
    sequence: `${prefix}users:sequence`,
    messages: `${prefix}messages`,
    quote: `${prefix}quote`,
    channel: `${prefix}changes`,
  };
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
  #client: RedisConnection;
  #subscriber: RedisConnection;
  #keys: ReturnType<typeof keysOf>;
  #history: number;
  #maxUsers: number;
  #timeoutMs: number;
  #epoch = 0;
  #subscription: Subscription;
  #copies: { [K in keyof Shared]: LocalCopy<Shared[K]> };
  #tokens: KeptTokens;
  #messagesLimit = 0;

  private constructor(
    client: RedisConnection,
    subscriber: RedisConnection,
    prefix: string,
    limits: Required<StoreLimits>,
    timeoutMs: number,
  ) {
    this.#client = client;
    this.#subscriber = subscriber;
    this.#keys = keysOf(prefix);
    this.#history = limits.history;
    this.#maxUsers = limits.maxUsers;
    this.#timeoutMs = timeoutMs;
    this.#subscription = {
      live: () => this.#subscriber.isReady,
      epoch: () => this.#epoch,
    };
    this.#copies = {
      messages: new LocalCopy(this.#subscription),
      quote: new LocalCopy(this.#subscription),
      users: new LocalCopy(this.#subscription),
    };
    this.#tokens = new KeptTokens(this.#subscription);
  }

  /** Connects, failing fast with a clear error when Redis cannot be reached. */
  static async connect(options: RedisStoreOptions): Promise<RedisStore> {
    const limits = resolveLimits(options);
    const connection = {
      url: options.url,
      connectTimeoutMs: options.connectTimeoutMs ?? 2000,
      report: options.onStatus ??
        ((message: string) => console.error(message)),
    };
    // The client is loaded here, not imported by this module, so that
    // importing the store (or documenting it) does not load node-redis.
    const { connect } = await import("./connection.ts");
    const client = await connect(connection, "commands");
    let subscriber: RedisConnection;
    try {
      subscriber = await connect(connection, "changes");
    } catch (error) {
      await client.close();
      throw error;
    }
    const store = new RedisStore(
      client,
      subscriber,
      options.prefix ?? "lms:",
      limits,
      options.commandTimeoutMs ?? 1000,
    );
    await store.#listen();
    return store;
  }

  async #listen(): Promise<void> {
    // Every (re)connection of the subscriber starts a new epoch: copies
    // taken before it may have missed a change while it was down. The client
    // resubscribes before it reports ready, so from then on nothing is missed.
    this.#subscriber.onReady(() => this.#epoch++);
    await this.#subscriber.subscribe(
      this.#keys.channel,
      (message: string) => this.#notice(message),
    );
  }

  /** Acts on a change notice from any process. */
  #notice(message: string): void {
    if (message.startsWith(REMOVED)) {
      this.#tokens.forget(message.slice(REMOVED.length));
      this.#copies.users.changed();
    } else if (Object.hasOwn(this.#copies, message)) {
      // The channel is shared text: only the names of copies count.
      this.#copies[message as keyof Shared].changed();
    }
  }

  /**
   * Answers what `command` answers, or fails as unavailable once it has
   * waited the command timeout. node-redis's own timeout stops counting
   * once a command is written, so a Redis that stops reading (frozen, or a
   * network that drops packets) would otherwise hold the request forever.
   * The command itself stays queued, so later replies still pair up.
   */
  #bounded<T>(command: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new StoreUnavailableError("Redis did not answer in time")),
        this.#timeoutMs,
      );
      command.then((value) => {
        clearTimeout(timer);
        resolve(value);
      }, (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  /** Stores the user unless taken or full, in one script. */
  async registerUser(name: string, token: string): Promise<RegisterResult> {
    const { users, order, sequence, channel } = this.#keys;
    const result = await this.#bounded(this.#client.run(
      "register",
      [users, order, sequence, channel],
      [name, token, String(this.#maxUsers)],
    ));
    if (result === "registered") {
      // A token this process kept for an earlier holder of the name, whose
      // removal notice may still be on its way, must not outlive this.
      this.#tokens.forget(name);
      this.#copies.users.changed();
    }
    return String(result) as RegisterResult;
  }

  /** The token of `name`, if registered: from the kept tokens while they are current, else from Redis. */
  tokenOf(name: string): Awaitable<string | undefined> {
    return this.#tokens.tokenOf(
      name,
      () => this.#bounded(this.#client.hGet(this.#keys.users, name)),
    );
  }

  /** Removes `name` while its token is still `token`, in one script. */
  async removeUser(name: string, token: string): Promise<boolean> {
    const { users, order, channel } = this.#keys;
    const removed = await this.#bounded(
      this.#client.run("remove", [users, order, channel], [name, token]),
    );
    if (Number(removed) !== 1) return false;
    this.#tokens.forget(name);
    this.#copies.users.changed();
    return true;
  }

  /** Names in registration order, from the local copy while it is current. */
  listUsers(): Awaitable<string[]> {
    return this.#copies.users.read(
      () => this.#bounded(this.#client.zRange(this.#keys.order, 0, -1)),
    );
  }

  /** Inserts the message, trims to the history bound and tells every process, in one script. */
  async addMessage(message: string): Promise<void> {
    const { messages, channel } = this.#keys;
    await this.#bounded(
      this.#client.run("addMessage", [messages, channel], [
        message,
        String(this.#history),
      ]),
    );
    this.#copies.messages.changed();
  }

  /** The newest `limit` messages as JSON array text. */
  newestMessages(limit: number): Awaitable<string> {
    if (limit !== this.#messagesLimit) {
      this.#messagesLimit = limit;
      this.#copies.messages.changed();
    }
    return this.#copies.messages.read(async () => {
      const items = await this.#bounded(
        this.#client.lRange(this.#keys.messages, 0, limit - 1),
      );
      return `[${items.join(",")}]`;
    });
  }

  /** The current quote. */
  getQuote(): Awaitable<string> {
    return this.#copies.quote.read(async () => {
      const quote = await this.#bounded(this.#client.get(this.#keys.quote));
      return quote ?? INITIAL_QUOTE;
    });
  }

  /** Replaces the quote and tells every process, in one script. */
  async setQuote(quote: string): Promise<void> {
    await this.#bounded(
      this.#client.run("setQuote", [this.#keys.quote, this.#keys.channel], [
        quote,
      ]),
    );
    this.#copies.quote.changed();
  }

  /** Closes both connections. */
  async close(): Promise<void> {
    await Promise.allSettled([this.#subscriber.close(), this.#client.close()]);
  }
}
