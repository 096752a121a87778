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
  INITIAL_QUOTE,
  type Readiness,
  type RecentMessages,
  type RegisterResult,
  type ResolvedLimits,
  resolveLimits,
  type Store,
  type StoreEvent,
  type StoreLimits,
} from "../store.ts";
import { checkWithin } from "../../limits/whole_range.ts";
import { RedisPresence } from "./presence.ts";
import { KeptTokens, LocalCopy, type Subscription } from "./local_copy.ts";
import type { RedisConnection } from "./redis_connection.ts";
import { ChangeListeners } from "../change_listeners.ts";
import { CommandGate } from "./command_gate.ts";
import { SettledWrites } from "./settled_writes.ts";
import { decodeNotice } from "./change_notice.ts";
import { callOf } from "./scripts.ts";
import { lookOf } from "../../identity/name_skeleton.ts";
import { isClearToken, tokenDigest } from "../../identity/token_digest.ts";
import {
  checkReply,
  historyEntry,
  messageId,
  oneOf,
  recentMessages,
  UnexpectedReply,
} from "./replies.ts";

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
    /** Written by `/readyz`'s probe, expiring in 10 s. */
    readiness: `${prefix}readiness`,
    /** A client's rate-limit bucket: this, then its address. */
    allowance: `${prefix}allowance:`,
    /** Presence and activity: `lua/presence*.lua`, `lua/held.lua`. */
    touched: `${prefix}users:touched`,
    /** One name, one look: `s:<skeleton>` → name and `n:<name>` → skeleton. */
    looks: `${prefix}users:looks`,
    processes: `${prefix}presence:processes`,
    held: `${prefix}presence:held`,
  };
}

const notReady = (reason: string): Readiness => ({ ready: false, reason });

/** Why a probe write failed, in words an operator acts on. */
function readinessReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const refused = /Redis refused: (\w+)/.exec(message)?.[1];
  switch (refused) {
    case "OOM":
      return "out of memory: Redis refuses writes (maxmemory)";
    case "READONLY":
      return "read-only replica: Redis refuses writes";
    case "MISCONF":
      return "Redis cannot save its data (MISCONF) and refuses writes";
    case "LOADING":
      return "Redis is loading its data";
    case undefined:
      return `unreachable: ${message}`;
    default:
      return `Redis refuses writes: ${message.slice("Redis refused: ".length)}`;
  }
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
  #gate: CommandGate;
  #writes: SettledWrites;
  #keys: ReturnType<typeof keysOf>;
  #history: number;
  #maxUsers: number;
  #epoch = 0;
  /** Whether the subscription is up: false from its loss until it is made anew. */
  #subscribed = false;
  #subscription: Subscription;
  #copies: { [K in keyof Shared]: LocalCopy<Shared[K]> };
  #tokens: KeptTokens;
  #messagesLimit = 0;
  /**
   * The highest message id this process has seen (its own writes, every
   * notice, every catch-up, the check): a sequence that Redis lost goes on
   * above it (the `addMessage` and `raiseSequence` scripts), so an id is
   * never given twice while any process that saw it runs. What remains: a
   * Redis emptied while none runs (all restarted with it) starts again at
   * 1, and a reader's `Last-Event-ID` N from before counts as absent until
   * the new sequence passes N, then hides the new messages up to N. Only a
   * Redis that keeps its data (persistence) closes that.
   */
  #highestId = 0;
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
  #presence: RedisPresence;

  private constructor(
    client: RedisConnection,
    subscriber: RedisConnection,
    prefix: string,
    limits: ResolvedLimits,
    timeoutMs: number,
    maxPending: number,
    heartbeatMs: number,
    replicas: number,
  ) {
    this.#client = client;
    this.#subscriber = subscriber;
    this.#keys = keysOf(prefix);
    this.#history = limits.history;
    this.#maxUsers = limits.maxUsers;
    this.#gate = new CommandGate(client, { timeoutMs, maxPending });
    this.#writes = new SettledWrites(client, this.#gate, {
      prefix,
      windowMs: timeoutMs,
      allowancePrefix: this.#keys.allowance,
      replicas,
    });
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
    this.#presence = new RedisPresence({
      client,
      gate: this.#gate,
      keys: this.#keys,
      subscription: this.#subscription,
      heartbeatMs,
      forgetUsersAfter: limits.forgetUsersAfter,
    });
  }

  /** Connects, failing fast with a clear error when Redis cannot be reached. */
  static async connect(options: RedisStoreOptions): Promise<RedisStore> {
    const limits = resolveLimits(options);
    const heartbeatMs = checkWithin(
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
      heartbeatMs,
      options.waitReplicas ?? 0,
    );
    try {
      await store.#listen();
      await store.#check();
      await store.#convertEarlierUsers();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /**
   * Converts the users an earlier version left: a token kept in clear
   * becomes its digest and a name gains its look, each in one step that
   * does nothing if the user changed meanwhile. Every process does it as it
   * connects; once done, a scan finds nothing to convert.
   */
  async #convertEarlierUsers(): Promise<void> {
    const { users, looks } = this.#keys;
    let cursor = "0";
    // HSCAN ends by returning cursor 0; the bound only guards a Redis that never does.
    for (let step = 0; step < 10_000_000; step++) {
      const reply = await this.#gate.read(() =>
        this.#client.run(
          ...callOf("usersToConvert", { users, looks }, {
            cursor,
            count: "500",
          }),
        )
      );
      if (
        !Array.isArray(reply) || reply.some((item) => typeof item !== "string")
      ) throw new UnexpectedReply("usersToConvert", reply);
      const [next, ...found] = reply as string[];
      for (let i = 0; i + 1 < found.length; i += 2) {
        const name = found[i]!, stored = found[i + 1]!;
        await this.#gate.read(() =>
          this.#client.run(
            ...callOf("convertUser", { users, looks }, {
              name,
              stored,
              digest: isClearToken(stored) ? tokenDigest(stored) : stored,
              skeleton: lookOf(name),
            }),
          )
        );
      }
      if (next === "0") return;
      cursor = next!;
    }
  }

  /**
   * Reads Redis's clock (for the write fences) and the newest message id
   * (raising it back to the highest this process has seen when Redis lost
   * it), removes the write records nothing can ask for any more, and checks
   * the generation key; adopts a new generation, dropping every copy, when
   * it is gone.
   */
  async #check(): Promise<void> {
    if (this.#checking) return;
    this.#checking = true;
    try {
      const before = Date.now();
      const { redisNow, generation, newestId } = checkReply(
        await this.#gate.read(() =>
          this.#client.run(
            ...callOf("check", {
              generation: this.#keys.generation,
              sequence: this.#keys.messageSequence,
            }, {}),
          )
        ),
      );
      this.#writes.observeClock(redisNow, before, Date.now());
      if (newestId < this.#highestId) {
        // Redis lost the sequence: restore it before anyone writes.
        await this.#gate.read(() =>
          this.#client.run(
            ...callOf("raiseSequence", {
              sequence: this.#keys.messageSequence,
            }, { floor: String(this.#highestId) }),
          )
        );
      }
      this.#sawId(newestId);
      await this.#writes.tick();
      if (generation !== null && generation === this.#generation) return;
      if (this.#generation !== null) this.#emptied();
      const fresh = crypto.randomUUID();
      await this.#gate.read(() =>
        this.#client.setIfAbsent(this.#keys.generation, fresh)
      );
      this.#generation = await this.#gate.read(() =>
        this.#client.get(this.#keys.generation)
      );
    } catch (error) {
      // The next check tries again; requests meanwhile see Redis's state.
      if (this.#generation === null) throw error;
    } finally {
      this.#checking = false;
    }
  }

  #sawId(id: number): void {
    if (id > this.#highestId) this.#highestId = id;
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
      this.#gate.read(() => this.#client.get(this.#keys.generation)),
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
        this.#sawId(notice.id);
        this.#listeners.emit(notice);
        break;
      case "quote":
        this.#copies.quote.changed();
        this.#listeners.emit(notice);
        break;
      case "removed":
        this.#tokens.forget(notice.name);
        this.#copies.users.changed();
        this.#presence.changed();
        this.#listeners.emit({ kind: "unregistered", name: notice.name });
        break;
      case "registered":
        this.#copies.users.changed();
        break;
      case "online":
      case "offline":
        this.#presence.changed();
        this.#listeners.emit({
          kind: "presence",
          name: notice.name,
          online: notice.kind === "online",
        });
        break;
    }
  }

  /** Stores the user unless taken or full, in one script. */
  async registerUser(
    name: string,
    token: string,
    allowance?: Allowance,
  ): Promise<RegisterResult> {
    const { users, order, sequence, channel, touched, looks } = this.#keys;
    const result = oneOf(
      "register",
      await this.#writes.run(
        "register",
        { users, order, sequence, channel, touched, looks },
        {
          name,
          token,
          maxUsers: String(this.#maxUsers),
          skeleton: lookOf(name),
        },
        allowance,
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
      () => this.#gate.read(() => this.#client.hGet(this.#keys.users, name)),
    );
  }

  /** Removes `name` while its token is still `token`, in one script. */
  async removeUser(
    name: string,
    token: string,
    allowance?: Allowance,
  ): Promise<boolean> {
    const { users, order, channel, touched, held, looks } = this.#keys;
    const result = oneOf(
      "remove",
      await this.#writes.run(
        "remove",
        { users, order, channel, touched, held, looks },
        { name, token },
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
        this.#gate.read(() => this.#client.zRange(this.#keys.order, 0, -1))
      )
    );
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

  /** Notes that `name` was active; sent to Redis before this process's next sweep. */
  touchUser(name: string): void {
    this.#presence.touch(name);
  }

  /** How many users are registered (`HLEN`), without listing them. */
  userCount(): Promise<number> {
    return this.#gate.read(() => this.#client.hLen(this.#keys.users));
  }

  /** Inserts the message with the next id, trims to the history bound and tells every process, in one script. */
  async addMessage(message: string, allowance?: Allowance): Promise<number> {
    const { messages, messageSequence, channel } = this.#keys;
    const id = messageId(
      "addMessage",
      await this.#writes.run(
        "addMessage",
        { messages, sequence: messageSequence, channel },
        {
          message,
          history: String(this.#history),
          floor: String(this.#highestId),
        },
        allowance,
      ),
    );
    this.#sawId(id);
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
        const entries = await this.#gate.read(() =>
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
    const reply = await this.#gate.read(() =>
      this.#client.run(
        ...callOf("recent", { messages, sequence: messageSequence }, {
          afterId: String(afterId),
          limit: String(limit ?? this.#history),
        }),
      )
    );
    const recent = recentMessages(reply, afterId);
    this.#sawId(recent.newestId);
    return recent;
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
        const quote = await this.#gate.read(() =>
          this.#client.get(this.#keys.quote)
        );
        return quote ?? INITIAL_QUOTE;
      })
    );
  }

  /** Replaces the quote and tells every process, in one script. */
  async setQuote(quote: string, allowance?: Allowance): Promise<void> {
    const result = await this.#writes.run(
      "setQuote",
      { quoteKey: this.#keys.quote, channel: this.#keys.channel },
      { quote },
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
  async isReady(): Promise<Readiness> {
    if (!this.#subscription.live()) {
      return notReady("no subscription: this process cannot hear of changes");
    }
    try {
      await this.#gate.read(() =>
        this.#client.probeWrite(this.#keys.readiness)
      );
      return { ready: true };
    } catch (error) {
      return notReady(readinessReason(error));
    }
  }

  /** Drops this process's presence (its users go offline now), then closes both connections; writes still unsettled give up. */
  async close(): Promise<void> {
    clearInterval(this.#checker);
    await this.#presence.close();
    this.#writes.close();
    this.#gate.close();
    await Promise.allSettled([this.#subscriber.close(), this.#client.close()]);
  }
}
