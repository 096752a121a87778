/**
 * What every part of the Redis store shares: the two connections, the
 * command gate, settled writes, the change notices heard and the check
 * that Redis still holds its data (docs/redis.md says how each works).
 * @module
 */

import type {
  ChangeFeed,
  Readiness,
  StoreEvent,
  StoreHealth,
} from "../store.ts";
import type { Subscription } from "./local_copy.ts";
import type { RedisConnection } from "./redis_connection.ts";
import { ChangeListeners } from "../change_listeners.ts";
import { CommandGate } from "./command_gate.ts";
import { SettledWrites } from "./settled_writes.ts";
import { decodeNotice, type Notice } from "./change_notice.ts";
import { callOf } from "./scripts.ts";
import { checkReply } from "./replies.ts";

/** Every key of one deployment, under its prefix. */
export function keysOf(prefix: string) {
  return {
    users: `${prefix}users`,
    order: `${prefix}users:order`,
    sequence: `${prefix}users:sequence`,
    // `<id> <json>` entries, newest first (named anew with ids, so a list
    // of an earlier version is never misread).
    messages: `${prefix}history`,
    messageSequence: `${prefix}history:sequence`,
    quote: `${prefix}quote`,
    channel: `${prefix}changes`,
    generation: `${prefix}generation`,
    /** Written by `/readyz`'s probe, expiring in 10 s. */
    readiness: `${prefix}readiness`,
    /** A client's rate-limit bucket: this, then its address. */
    allowance: `${prefix}allowance:`,
    /** A client's failed authentications: this, then its address. */
    authFailures: `${prefix}auth-failures:`,
    touched: `${prefix}users:touched`,
    /** Set once every user of an earlier version is converted, so later connects skip the scan. */
    converted: `${prefix}users:converted`,
    /** One name, one look: `s:<skeleton>` → name and `n:<name>` → skeleton. */
    looks: `${prefix}users:looks`,
    processes: `${prefix}presence:processes`,
    held: `${prefix}presence:held`,
  };
}

/** How often the store checks that Redis still holds its data (and reads Redis's clock). */
const CHECK_INTERVAL_MS = 1000;

/** How the kernel is set up: {@linkcode RedisStoreOptions}, resolved. */
export interface KernelOptions {
  prefix: string;
  timeoutMs: number;
  maxPending: number;
  replicas: number;
}

/** The shared core of the Redis store; its parts read and write through it. */
export class RedisKernel implements ChangeFeed, StoreHealth {
  readonly client: RedisConnection;
  readonly gate: CommandGate;
  readonly writes: SettledWrites;
  readonly keys: ReturnType<typeof keysOf>;
  readonly subscription: Subscription;
  #subscriber: RedisConnection;
  #epoch = 0;
  /** Whether the subscription is up: false from its loss until it is made anew. */
  #subscribed = false;
  /**
   * The highest message id this process has seen: a sequence Redis lost
   * goes on above it, so no id is given twice while a process that saw it
   * runs (docs/redis.md, Faults).
   */
  #highestId = 0;
  /** The id under the generation key when this data set began; a Redis emptied under the service loses it. */
  #generation: string | null = null;
  #checker: ReturnType<typeof setInterval> | undefined;
  #checking = false;
  #listeners = new ChangeListeners();
  #hearers: ((notice: Notice) => void)[] = [];

  constructor(
    client: RedisConnection,
    subscriber: RedisConnection,
    options: KernelOptions,
  ) {
    this.client = client;
    this.#subscriber = subscriber;
    this.keys = keysOf(options.prefix);
    this.gate = new CommandGate(client, options);
    this.writes = new SettledWrites(client, this.gate, {
      prefix: options.prefix,
      windowMs: options.timeoutMs,
      allowancePrefix: this.keys.allowance,
      replicas: options.replicas,
    });
    this.subscription = {
      live: () => this.#subscribed && this.#subscriber.isReady,
      epoch: () => this.#epoch,
    };
  }

  /** Subscribes and checks once, then every second (a failed check is tried again at the next). */
  async start(): Promise<void> {
    await this.#listen();
    await this.check();
    this.#checker = setInterval(
      () => this.check().catch(() => {}),
      CHECK_INTERVAL_MS,
    );
  }

  /** One read through the gate, bounded in time and number. */
  read<T>(send: (client: RedisConnection) => Promise<T>): Promise<T> {
    return this.gate.read(() => send(this.client));
  }

  /** Calls `hear` with every change notice, before listeners hear of it. */
  onNotice(hear: (notice: Notice) => void): void {
    this.#hearers.push(hear);
  }

  /** Notes a message id this process saw (its own writes, notices, catch-ups). */
  sawId(id: number): void {
    if (id > this.#highestId) this.#highestId = id;
  }

  get highestId(): number {
    return this.#highestId;
  }

  /**
   * Reads Redis's clock (for the write fences) and the newest message id
   * (raised back when Redis lost it), removes stale write records, and
   * adopts a new generation, dropping every copy, when it is gone.
   */
  async check(): Promise<void> {
    if (this.#checking) return;
    this.#checking = true;
    try {
      const before = Date.now();
      const { generation, messageSequence: sequence } = this.keys;
      const { redisNow, generation: found, newestId } = checkReply(
        await this.read((c) =>
          c.run(...callOf("check", { generation, sequence }, {}))
        ),
      );
      this.writes.observeClock(redisNow, before, Date.now());
      if (newestId < this.#highestId) {
        const floor = String(this.#highestId);
        await this.read((c) =>
          c.run(...callOf("raiseSequence", { sequence }, { floor }))
        );
      }
      this.sawId(newestId);
      await this.writes.tick();
      if (found !== null && found === this.#generation) return;
      if (this.#generation !== null) this.#emptied();
      await this.read((c) => c.setIfAbsent(generation, crypto.randomUUID()));
      this.#generation = await this.read((c) => c.get(generation));
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

  /** Loads a copy with the generation key in one round trip: a copy from an emptied Redis is not kept. */
  async load<T>(read: () => Promise<T>): Promise<T> {
    const [value, generation] = await Promise.all([
      read(),
      this.read((c) => c.get(this.keys.generation)),
    ]);
    if (generation !== this.#generation) {
      this.#emptied();
      this.check().catch(() => {});
    }
    return value;
  }

  async #listen(): Promise<void> {
    // Every (re)connection starts a new epoch: copies taken before may have
    // missed a change. The client resubscribes before it reports ready.
    this.#subscriber.onReady(() => {
      this.#epoch++;
      this.#subscribed = true;
    });
    // Changes may be missed from now on: readers must start again.
    this.#subscriber.onLost(() => {
      this.#subscribed = false;
      this.#listeners.emit({ kind: "reset" });
    });
    await this.#subscriber.subscribe(
      this.keys.channel,
      (text: string) => this.#notice(text),
    );
    this.#subscribed = true;
  }

  /** Acts on a change notice from any process, this one included. */
  #notice(text: string): void {
    const notice = decodeNotice(text);
    if (notice === undefined) return;
    if (notice.kind === "message") this.sawId(notice.id);
    for (const hear of this.#hearers) hear(notice);
    const event = eventOf(notice);
    if (event !== undefined) this.#listeners.emit(event);
  }

  /** Tells `listener` of every change any process makes, in id order for messages. */
  subscribe(listener: (event: StoreEvent) => void): () => void {
    return this.#listeners.subscribe(listener);
  }

  /** The subscription's epoch while it is up; `undefined` while it is down. */
  subscriptionEpoch(): number | undefined {
    return this.subscription.live() ? this.#epoch : undefined;
  }

  /** Whether the subscription is up and Redis takes a write within the command timeout, and why not. */
  async isReady(): Promise<Readiness> {
    if (!this.subscription.live()) {
      return notReady("no subscription: this process cannot hear of changes");
    }
    try {
      await this.read((c) => c.probeWrite(this.keys.readiness));
      return { ready: true };
    } catch (error) {
      return notReady(readinessReason(error));
    }
  }

  /** Stops the check and gives up unsettled writes; the caller closes the connections. */
  close(): Promise<PromiseSettledResult<void>[]> {
    clearInterval(this.#checker);
    this.writes.close();
    this.gate.close();
    return Promise.allSettled([this.#subscriber.close(), this.client.close()]);
  }
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

/** What listeners hear of a notice; `registered` only drops copies. */
function eventOf(notice: Notice): StoreEvent | undefined {
  switch (notice.kind) {
    case "message":
    case "quote":
      return notice;
    case "removed":
      return { kind: "unregistered", name: notice.name };
    case "online":
    case "offline":
      return {
        kind: "presence",
        name: notice.name,
        online: notice.kind === "online",
      };
  }
}
