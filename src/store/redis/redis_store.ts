/**
 * State in Redis, shared by any number of processes, read from local copies dropped on every
 * change notice (docs/redis.md); a separate entry, so importing the main one never loads node-redis.
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
  FREE_TRY,
  HEARTBEAT_MS,
  INITIAL_QUOTE,
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
import { lookOf } from "../../identity/name_skeleton.ts";
import { isClearToken, tokenDigest } from "../../identity/token_digest.ts";
import { RedisPresence } from "./presence.ts";
import type { RedisConnection } from "./redis_connection.ts";
import { RedisKernel } from "./kernel.ts";
import { KeptTokens, LocalCopy } from "./local_copy.ts";
import {
  historyEntry,
  isString,
  listOf,
  messageId,
  messagePage,
  oneOf,
  recentMessages,
  UnexpectedReply,
} from "./replies.ts";
import { type RateLimit, TokenBuckets } from "../token_buckets.ts";

/** How many clients waiting to authenticate are remembered at most; past it the oldest is forgotten. */
const MAX_WAITING = 100_000;

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
  #maxUsers: number;
  #history: number;
  #userList: LocalCopy<string[]>;
  #tokens: KeptTokens;
  #newest: LocalCopy<readonly string[]>;
  #newestLimit = 0;
  #quote: LocalCopy<string>;
  #presence: RedisPresence;
  /** Per client: until when (Date.now) it must wait, as any process heard. */
  #authWaiting = new Map<string, number>();
  /** This process's own count of failed authentications: what still holds while Redis does not answer. */
  #authLocal = new TokenBuckets();

  private constructor(
    client: RedisConnection,
    subscriber: RedisConnection,
    options: RedisStoreOptions,
    heartbeatMs: number,
  ) {
    const limits = resolveLimits(options);
    const kernel = new RedisKernel(client, subscriber, {
      prefix: options.prefix ?? "lms:",
      timeoutMs: options.commandTimeoutMs ?? 1000,
      maxPending: options.maxPendingCommands ?? 1000,
      replicas: options.waitReplicas ?? 0,
    });
    this.#kernel = kernel;
    this.#maxUsers = limits.maxUsers;
    this.#history = limits.history;
    this.#presence = new RedisPresence(
      kernel,
      heartbeatMs,
      limits.forgetUsersAfter,
    );
    this.#userList = new LocalCopy(kernel);
    this.#tokens = new KeptTokens(kernel);
    this.#newest = new LocalCopy(kernel);
    this.#quote = new LocalCopy(kernel);
    kernel.onNotice((notice) => {
      if (notice.kind === "unregistered") this.#tokens.forget(notice.name);
      if (notice.kind === "unregistered" || notice.kind === "registered") {
        this.#userList.changed();
      }
      if (notice.kind === "message") this.#newest.changed();
      if (notice.kind === "quote") this.#quote.changed();
      if (notice.kind === "limited") {
        this.#authWaitFor(notice.client, notice.waitMs);
      }
    });
  }

  /** Fails fast with a clear error when Redis cannot be reached. */
  static async connect(options: RedisStoreOptions): Promise<RedisStore> {
    resolveLimits(options);
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
    const store = new RedisStore(client, subscriber, options, heartbeatMs);
    try {
      await store.#kernel.start();
      await store.#convertEarlier();
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  async registerUser(
    name: string,
    token: string,
    allowance?: Allowance,
  ): Promise<RegisterResult> {
    const result = oneOf(
      "register",
      await this.#kernel.writes.run("register", this.#kernel.keys, {
        name,
        token,
        maxUsers: String(this.#maxUsers),
        skeleton: lookOf(name),
      }, allowance),
      ["registered", "exists", "full"],
    );
    if (result === "registered") {
      // A kept token of an earlier holder, its removal notice maybe still on its way, must go.
      this.#tokens.forget(name);
      this.#userList.changed();
    }
    return result;
  }

  tokenOf(name: string): Awaitable<string | undefined> {
    const kernel = this.#kernel;
    return this.#tokens.tokenOf(
      name,
      () => kernel.read((c) => c.hGet(kernel.keys.users, name)),
    );
  }

  async removeUser(
    name: string,
    token: string,
    allowance?: Allowance,
  ): Promise<boolean> {
    const result = oneOf(
      "remove",
      await this.#kernel.writes.run(
        "remove",
        this.#kernel.keys,
        { name, token },
        allowance,
      ),
      ["removed", "kept"],
    );
    if (result === "kept") return false;
    this.#tokens.forget(name);
    this.#userList.changed();
    return true;
  }

  listUsers(): Awaitable<string[]> {
    const kernel = this.#kernel;
    return this.#userList.read(() =>
      kernel.load(() => kernel.read((c) => c.zRange(kernel.keys.order, 0, -1)))
    );
  }

  userCount(): Promise<number> {
    return this.#kernel.read((c) => c.hLen(this.#kernel.keys.users));
  }

  /** Sent to Redis before this process's next sweep. */
  touchUser(name: string): void {
    this.#presence.touch(name);
  }

  /** Converts the users an earlier version left (docs/redis.md, "Converting 0.2.0's users"). */
  async #convertEarlier(): Promise<void> {
    const kernel = this.#kernel;
    const { keys } = kernel;
    if (await kernel.read((c) => c.get(keys.converted)) !== null) return;
    let cursor = "0";
    // HSCAN ends by returning cursor 0; the bound only guards a Redis that never does.
    for (let step = 0; step < 10_000_000; step++) {
      const [next, ...found] = listOf<string[]>(
        "usersToConvert",
        await kernel.script("usersToConvert", keys, { cursor, count: "500" }),
        isString,
      );
      for (let i = 0; i + 1 < found.length; i += 2) {
        const name = found[i]!, stored = found[i + 1]!;
        await kernel.script("convertUser", keys, {
          name,
          stored,
          digest: isClearToken(stored) ? tokenDigest(stored) : stored,
          skeleton: lookOf(name),
        });
      }
      if (next === "0") {
        await kernel.read((c) => c.setIfAbsent(keys.converted, "1"));
        return;
      }
      cursor = next!;
    }
  }

  /** As every process counts; only a client that failed here lately costs a round trip. */
  authWait(
    client: string,
    rate: RateLimit,
    credential: { name: string; digest: string } | null,
  ): Awaitable<AuthTry> {
    const waitMs = this.#knownAuthWait(client, rate);
    if (waitMs > 0) return { waitMs };
    if (!this.#authLocal.tracks(client)) return FREE_TRY;
    return this.#runAuth(client, rate, credential).then((answer) => {
      // Redis did not answer: the caller checks, as this process alone would.
      if (answer === undefined) return FREE_TRY;
      const [verdict, waitMs] = answer;
      if (verdict === -1) return { waitMs: Math.max(1, waitMs) };
      if (verdict === 0) this.#authLocal.take(client, rate);
      return { waitMs: 0, verdict: verdict === 1 };
    });
  }

  countAuthFailure(client: string, rate: RateLimit): Promise<number> {
    // Counted here before the round trip, so this process's next try, even this turn, goes to Redis.
    const localWait = this.#authLocal.take(client, rate);
    return this.#runAuth(client, rate, undefined).then((answer) =>
      // Redis did not answer: this process's count stands alone.
      answer === undefined
        ? localWait
        : answer[0] === 1
        ? 0
        : Math.max(1, answer[1])
    );
  }

  #authWaitFor(client: string, waitMs: number): void {
    if (this.#authWaiting.size >= MAX_WAITING) {
      this.#authWaiting.delete(this.#authWaiting.keys().next().value!);
    }
    this.#authWaiting.set(client, Date.now() + waitMs);
  }

  #knownAuthWait(client: string, rate: RateLimit): number {
    const local = this.#authLocal.waitOf(client, rate);
    const until = this.#authWaiting.get(client);
    if (until === undefined) return local;
    const shared = until - Date.now();
    if (shared <= 0) this.#authWaiting.delete(client);
    return Math.max(local, shared);
  }

  /** `authCheck` with a credential, else `authFailure`: `[verdict or counted, wait]`; `undefined` if Redis did not answer. */
  async #runAuth(
    client: string,
    rate: RateLimit,
    credential: { name: string; digest: string } | null | undefined,
  ): Promise<[number, number] | undefined> {
    const keys = this.#kernel.keys;
    const script = credential === undefined ? "authFailure" : "authCheck";
    let reply: unknown;
    try {
      // `authFailure` takes no credential: callOf sends only what it declares.
      reply = await this.#kernel.script(
        script,
        { ...keys, bucket: keys.authFailures + client },
        {
          client,
          period: String(rate.periodMs),
          burst: String(rate.burst),
          name: credential?.name ?? "",
          digest: credential?.digest ?? "",
        },
      );
    } catch {
      return undefined;
    }
    const [first, waitMs] = listOf<[number, number]>(
      script,
      reply,
      (n) => typeof n === "number",
      2,
    );
    // Refused from memory at once, before the notice to every process comes back.
    if (waitMs > 0) this.#authWaitFor(client, waitMs);
    return [first, waitMs];
  }

  userOnline(name: string): void {
    this.#presence.online(name);
  }

  userOffline(name: string): void {
    this.#presence.offline(name);
  }

  onlineUsers(): Awaitable<readonly string[]> {
    const users = this.listUsers();
    const online = this.#presence.onlineNames();
    const both = (list: readonly string[], names: ReadonlySet<string>) =>
      list.filter((name) => names.has(name));
    return users instanceof Promise || online instanceof Promise
      ? Promise.all([users, online]).then(([list, names]) => both(list, names))
      : both(users, online);
  }

  async addMessage(message: string, allowance?: Allowance): Promise<number> {
    const kernel = this.#kernel;
    const id = messageId(
      "addMessage",
      await kernel.writes.run("addMessage", kernel.keys, {
        message,
        history: String(this.#history),
        floor: String(kernel.highestId),
      }, allowance),
    );
    kernel.sawId(id);
    this.#newest.changed();
    return id;
  }

  newestMessages(limit: number): Awaitable<readonly string[]> {
    if (limit !== this.#newestLimit) {
      this.#newestLimit = limit;
      this.#newest.changed();
    }
    const kernel = this.#kernel;
    return this.#newest.read(() =>
      kernel.load(async () => {
        const entries = await kernel.read((c) =>
          c.lRange(kernel.keys.messages, 0, limit - 1)
        );
        return entries.map((entry) => historyEntry("LRANGE", entry).json);
      })
    );
  }

  async recentMessages(
    afterId: number,
    limit?: number,
  ): Promise<RecentMessages> {
    const reply = await this.#kernel.script("recent", this.#kernel.keys, {
      afterId: String(afterId),
      limit: String(limit ?? this.#history),
    });
    const recent = recentMessages(
      reply,
      afterId,
      limit === undefined || limit >= this.#history,
    );
    this.#kernel.sawId(recent.newestId);
    return recent;
  }

  async olderMessages(
    before: number | undefined,
    limit: number,
  ): Promise<MessagePage> {
    // Above every id: ids are safe integers, and Lua's numbers hold this one exactly.
    const below = before ?? Number.MAX_SAFE_INTEGER;
    const reply = await this.#kernel.script("older", this.#kernel.keys, {
      before: String(below),
      limit: String(limit),
    });
    return messagePage(reply, below, limit);
  }

  getQuote(): Awaitable<string> {
    const kernel = this.#kernel;
    return this.#quote.read(() =>
      kernel.load(async () =>
        (await kernel.read((c) => c.get(kernel.keys.quoteKey))) ??
          INITIAL_QUOTE
      )
    );
  }

  async setQuote(quote: string, allowance?: Allowance): Promise<void> {
    const result = await this.#kernel.writes.run(
      "setQuote",
      this.#kernel.keys,
      { quote },
      allowance,
    );
    if (result !== "set") throw new UnexpectedReply("setQuote", result);
    this.#quote.changed();
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    return this.#kernel.subscribe(listener);
  }

  subscriptionEpoch(): number | undefined {
    return this.#kernel.subscriptionEpoch();
  }

  isReady(): Promise<Readiness> {
    return this.#kernel.isReady();
  }

  /** Drops this process's presence, then closes both connections; unsettled writes give up. */
  async close(): Promise<void> {
    // First: retiring presence waits for a Redis that may be frozen.
    this.#kernel.writes.close();
    await this.#presence.close();
    await this.#kernel.close();
  }
}
