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
  type Allowance,
  type Awaitable,
  INITIAL_QUOTE,
  RateLimited,
  type RecentMessages,
  type RegisterResult,
  resolveLimits,
  type Store,
  type StoreEvent,
  type StoreLimits,
  StoreUnavailableError,
} from "../store.ts";
import { Deadlines } from "../../timers/deadlines.ts";
import { KeptTokens, LocalCopy, type Subscription } from "./local_copy.ts";
import type { RedisConnection } from "./redis_connection.ts";
import { ChangeListeners } from "../change_listeners.ts";
import { decodeNotice } from "./change_notice.ts";
import {
  historyEntry,
  messageId,
  oneOf,
  recentMessages,
  UnexpectedReply,
} from "./replies.ts";
import { LATE, LIMITED, type WriteName } from "./scripts.ts";

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
  /** How long one command may wait for its reply before the request is answered 503; it is checked every quarter of it, so the answer comes between 1 and 1.25 times this. Default 1,000 ms. */
  commandTimeoutMs?: number;
  /** How many commands may wait for Redis at once; past it requests are answered 503 at once and nothing is queued. Default 1,000. */
  maxPendingCommands?: number;
  /** How long a connection attempt may take. Default 2,000 ms. */
  connectTimeoutMs?: number;
  /** Told when the connection is lost (`error`) or restored (`info`). Default: a line on standard error. */
  onStatus?: (message: string, level: "error" | "info") => void;
}

/** The shared values a process keeps a copy of. */
type Shared = { messages: readonly string[]; quote: string; users: string[] };

function keysOf(prefix: string) {
  return {
    users: `${prefix}users`,
    order: `${prefix}users:order`,
    sequence: `${prefix}users:sequence`,
    // `<id> <json>` entries, newest first (the key name is new with ids,
    // so a list of an earlier version is never misread).
    messages: `${prefix}history`,
    messageSequence: `${prefix}history:sequence`,
    quote: `${prefix}quote`,
    channel: `${prefix}changes`,
    generation: `${prefix}generation`,
    /** A client's rate-limit bucket: this, then its address. */
    allowance: `${prefix}allowance:`,
  };
}

/** How often the store checks that Redis still holds its data (and reads Redis's clock). */
const CHECK_INTERVAL_MS = 1000;

const REGISTER_RESULTS = ["registered", "exists", "full"] as const;

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
  /** Whether the subscription is up: false from its loss until it is made anew. */
  #subscribed = false;
  #subscription: Subscription;
  #copies: { [K in keyof Shared]: LocalCopy<Shared[K]> };
  #tokens: KeptTokens;
  #messagesLimit = 0;
  #pending = 0;
  #maxPending: number;
  /** The commands waiting for Redis, each failed once the command timeout passes. */
  #waiting: Deadlines<(error: Error) => void>;
  /** Redis's clock minus ours, and how far that estimate may be off, in ms. */
  #clock = { offset: 0, error: 0 };
  /**
   * The id written under the generation key when this data set began. A
   * Redis emptied under the service (FLUSHALL, or a restart without
   * persistence) loses it, and no change notice says so: every copy and
   * kept token is dropped then.
   */
  #generation: string | null = null;
  #checker: ReturnType<typeof setInterval>;
  #listeners = new ChangeListeners();
  #checking = false;

  private constructor(
    client: RedisConnection,
    subscriber: RedisConnection,
    prefix: string,
    limits: Required<StoreLimits>,
    timeoutMs: number,
    maxPending: number,
  ) {
    this.#client = client;
    this.#subscriber = subscriber;
    this.#keys = keysOf(prefix);
    this.#history = limits.history;
    this.#maxUsers = limits.maxUsers;
    this.#timeoutMs = timeoutMs;
    this.#waiting = new Deadlines(
      timeoutMs,
      (reject) =>
        reject(new StoreUnavailableError("Redis did not answer in time")),
    );
    this.#maxPending = maxPending;
    // A failed check is tried again at the next tick.
    this.#checker = setInterval(
      () => this.#check().catch(() => {}),
      CHECK_INTERVAL_MS,
    );
    this.#subscription = {
      live: () => this.#subscribed && this.#subscriber.isReady,
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
      options.maxPendingCommands ?? 1000,
    );
    try {
      await store.#listen();
      await store.#check();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /**
   * Reads Redis's clock (for the write fences) and checks the generation
   * key; adopts a new generation, dropping every copy, when it is gone.
   */
  async #check(): Promise<void> {
    if (this.#checking) return;
    this.#checking = true;
    try {
      const before = Date.now();
      const [redisNow, generation] = await Promise.all([
        this.#client.time(),
        this.#client.get(this.#keys.generation),
      ]);
      const after = Date.now();
      this.#clock = {
        offset: redisNow - (before + after) / 2,
        error: (after - before) / 2 + 1,
      };
      if (generation !== null && generation === this.#generation) return;
      if (this.#generation !== null) this.#emptied();
      const fresh = crypto.randomUUID();
      await this.#client.setIfAbsent(this.#keys.generation, fresh);
      this.#generation = await this.#client.get(this.#keys.generation);
    } catch (error) {
      // The next check tries again; requests meanwhile see Redis's state.
      if (this.#generation === null) throw error;
    } finally {
      this.#checking = false;
    }
  }

  /** Redis lost its data: nothing kept locally may be served any more. */
  #emptied(): void {
    this.#generation = null;
    this.#epoch++;
    this.#listeners.emit({ kind: "reset" });
  }

  /**
   * Loads a copy together with the generation key, in one round trip: a
   * copy read from a Redis that was emptied since is not kept.
   */
  async #load<T>(read: () => Promise<T>): Promise<T> {
    const [value, generation] = await Promise.all([
      read(),
      this.#bounded(() => this.#client.get(this.#keys.generation)),
    ]);
    if (generation !== this.#generation) {
      this.#emptied();
      this.#check().catch(() => {});
    }
    return value;
  }

  async #listen(): Promise<void> {
    // Every (re)connection of the subscriber starts a new epoch: copies
    // taken before it may have missed a change while it was down. The client
    // resubscribes before it reports ready, so from then on nothing is missed.
    this.#subscriber.onReady(() => {
      this.#epoch++;
      this.#subscribed = true;
    });
    // Changes may be missed from now until then: readers must start again,
    // and no new one may start.
    this.#subscriber.onLost(() => {
      this.#subscribed = false;
      this.#listeners.emit({ kind: "reset" });
    });
    await this.#subscriber.subscribe(
      this.#keys.channel,
      (message: string) => this.#notice(message),
    );
    this.#subscribed = true;
  }

  /** Acts on a change notice from any process, this one included. */
  #notice(text: string): void {
    const notice = decodeNotice(text);
    switch (notice?.kind) {
      case "message":
        this.#copies.messages.changed();
        this.#listeners.emit(notice);
        break;
      case "quote":
        this.#copies.quote.changed();
        this.#listeners.emit(notice);
        break;
      case "removed":
        this.#tokens.forget(notice.name);
        this.#copies.users.changed();
        break;
      case "registered":
        this.#copies.users.changed();
        break;
    }
  }

  /**
   * Answers what `command` answers, or fails as unavailable once it has
   * waited the command timeout (one timer checks every command waiting, so
   * between 1 and 1.25 times it). node-redis's own timeout is off
   * (`connection.ts`): it stopped counting once a command was written, so a
   * Redis that stops reading (frozen, or a network that drops packets)
   * would have held the request forever.
   * A command that timed out stays queued in the client until Redis
   * answers, so at most `maxPendingCommands` may wait at once: past it the
   * command is not sent at all. `onLate` sees the answer of a command that
   * came after its request was answered 503.
   */
  #bounded<T>(
    command: () => Promise<T>,
    onLate?: (value: T) => void,
  ): Promise<T> {
    if (this.#pending >= this.#maxPending) {
      return Promise.reject(
        new StoreUnavailableError("too many commands are waiting for Redis"),
      );
    }
    this.#pending++;
    return new Promise<T>((resolve, reject) => {
      const waiting = this.#waiting.add(reject);
      command().then((value) => {
        this.#pending--;
        if (this.#waiting.delete(waiting)) resolve(value);
        else onLate?.(value);
      }, (error) => {
        this.#pending--;
        this.#waiting.delete(waiting);
        reject(error);
      });
    });
  }

  /**
   * Runs a write script, fenced: its last argument is the moment, in
   * Redis's clock, after which Redis refuses to apply it, set before this
   * request is answered 503 (less the clock's uncertainty and a margin for
   * the reply's way back).
   */
  async #write(
    script: WriteName,
    keys: string[],
    args: string[],
    allowance: Allowance | undefined,
    onLate?: (value: unknown) => void,
  ): Promise<unknown> {
    const margin = Math.min(100, this.#timeoutMs / 4);
    const fence = String(Math.floor(
      Date.now() + this.#timeoutMs - margin + this.#clock.offset -
        this.#clock.error,
    ));
    const result = await this.#bounded(
      () =>
        allowance === undefined
          ? this.#client.run(script, keys, [...args, fence])
          : this.#client.run(
            `${script}Limited`,
            [...keys, this.#keys.allowance + allowance.client],
            [
              ...args,
              String(allowance.rate.periodMs),
              String(allowance.rate.burst),
              fence,
            ],
          ),
      onLate,
    );
    if (result === LATE) {
      throw new StoreUnavailableError("Redis ran the write too late");
    }
    if (typeof result === "string" && result.startsWith(LIMITED)) {
      throw new RateLimited(
        Number(result.slice(LIMITED.length)),
        allowance!.rate,
      );
    }
    return result;
  }

  /** Stores the user unless taken or full, in one script. */
  async registerUser(
    name: string,
    token: string,
    allowance?: Allowance,
  ): Promise<RegisterResult> {
    const { users, order, sequence, channel } = this.#keys;
    const result = oneOf(
      "register",
      await this.#write(
        "register",
        [users, order, sequence, channel],
        [name, token, String(this.#maxUsers)],
        allowance,
        // Answered 503, yet applied: the fence's margin was not enough for
        // the reply's way back. Nobody has this token, so take it back.
        (late) => {
          if (late === "registered") {
            this.removeUser(name, token).catch(() => {});
          }
        },
      ),
      REGISTER_RESULTS,
    );
    if (result === "registered") {
      // A token this process kept for an earlier holder of the name, whose
      // removal notice may still be on its way, must not outlive this.
      this.#tokens.forget(name);
      this.#copies.users.changed();
    }
    return result;
  }

  /** The token of `name`, if registered: from the kept tokens while they are current, else from Redis. */
  tokenOf(name: string): Awaitable<string | undefined> {
    return this.#tokens.tokenOf(
      name,
      () => this.#bounded(() => this.#client.hGet(this.#keys.users, name)),
    );
  }

  /** Removes `name` while its token is still `token`, in one script. */
  async removeUser(
    name: string,
    token: string,
    allowance?: Allowance,
  ): Promise<boolean> {
    const { users, order, channel } = this.#keys;
    const result = oneOf(
      "remove",
      await this.#write(
        "remove",
        [users, order, channel],
        [name, token],
        allowance,
      ),
      ["removed", "kept"],
    );
    if (result === "kept") return false;
    this.#tokens.forget(name);
    this.#copies.users.changed();
    return true;
  }

  /** Names in registration order, from the local copy while it is current. */
  listUsers(): Awaitable<string[]> {
    return this.#copies.users.read(() =>
      this.#load(() =>
        this.#bounded(() => this.#client.zRange(this.#keys.order, 0, -1))
      )
    );
  }

  /** How many users are registered (`HLEN`), without listing them. */
  userCount(): Promise<number> {
    return this.#bounded(() => this.#client.hLen(this.#keys.users));
  }

  /** Inserts the message with the next id, trims to the history bound and tells every process, in one script. */
  async addMessage(message: string, allowance?: Allowance): Promise<number> {
    const { messages, messageSequence, channel } = this.#keys;
    const id = messageId(
      "addMessage",
      await this.#write(
        "addMessage",
        [messages, messageSequence, channel],
        [message, String(this.#history)],
        allowance,
      ),
    );
    this.#copies.messages.changed();
    return id;
  }

  /** The newest `limit` messages, newest first, from the local copy while it is current. */
  newestMessages(limit: number): Awaitable<readonly string[]> {
    if (limit !== this.#messagesLimit) {
      this.#messagesLimit = limit;
      this.#copies.messages.changed();
    }
    return this.#copies.messages.read(() =>
      this.#load(async () => {
        const entries = await this.#bounded(() =>
          this.#client.lRange(this.#keys.messages, 0, limit - 1)
        );
        return entries.map((entry) => historyEntry("LRANGE", entry).json);
      })
    );
  }

  /**
   * The retained messages with an id above `afterId`, oldest first, in one
   * round trip that reads only those (at most `limit`, or the history).
   */
  async recentMessages(
    afterId: number,
    limit?: number,
  ): Promise<RecentMessages> {
    const { messages, messageSequence } = this.#keys;
    const reply = await this.#bounded(() =>
      this.#client.run("recent", [messages, messageSequence], [
        String(afterId),
        String(limit ?? this.#history),
      ])
    );
    return recentMessages(reply, afterId);
  }

  /** Tells `listener` of every change any process makes, in id order for messages. */
  subscribe(listener: (event: StoreEvent) => void): () => void {
    return this.#listeners.subscribe(listener);
  }

  /** The subscription's epoch while it is up; `undefined` while it is down. */
  subscriptionEpoch(): number | undefined {
    return this.#subscription.live() ? this.#epoch : undefined;
  }

  /** The current quote. */
  getQuote(): Awaitable<string> {
    return this.#copies.quote.read(() =>
      this.#load(async () => {
        const quote = await this.#bounded(() =>
          this.#client.get(this.#keys.quote)
        );
        return quote ?? INITIAL_QUOTE;
      })
    );
  }

  /** Replaces the quote and tells every process, in one script. */
  async setQuote(quote: string, allowance?: Allowance): Promise<void> {
    const result = await this.#write(
      "setQuote",
      [this.#keys.quote, this.#keys.channel],
      [quote],
      allowance,
    );
    if (result !== "set") throw new UnexpectedReply("setQuote", result);
    this.#copies.quote.changed();
  }

  /**
   * Whether this process can serve everything: its subscription is up (a
   * process that cannot hear of changes cannot serve streams exactly), and
   * Redis answers a `PING` within the command timeout (1 s by default).
   */
  async isReady(): Promise<boolean> {
    if (!this.#subscription.live()) return false;
    try {
      await this.#bounded(() => this.#client.ping());
      return true;
    } catch {
      return false;
    }
  }

  /** Closes both connections. */
  async close(): Promise<void> {
    clearInterval(this.#checker);
    this.#waiting.close();
    await Promise.allSettled([this.#subscriber.close(), this.#client.close()]);
  }
}
