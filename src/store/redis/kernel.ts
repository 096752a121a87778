/**
 * What every part of the Redis store shares (docs/redis.md says how each works).
 * @module
 */

import type {
  ChangeFeed,
  Readiness,
  StoreEvent,
  StoreHealth,
} from "../store.ts";
import type { RedisConnection } from "./redis_connection.ts";
import { ChangeListeners } from "../change_listeners.ts";
import { CommandGate, type GateOptions } from "./command_gate.ts";
import { SettledWrites, type SettledWritesOptions } from "./settled_writes.ts";
import { decodeNotice, type Notice } from "./change_notice.ts";
import {
  type ArgsOf,
  callOf,
  type KeysOf,
  type ScriptName,
} from "./scripts.ts";
import { checkReply } from "./replies.ts";

/** Named as the scripts name them, so a script takes the whole set. */
function keysOf(prefix: string) {
  return {
    users: `${prefix}users`,
    order: `${prefix}users:order`,
    userSequence: `${prefix}users:sequence`,
    // Newest first; named anew with ids, so a list of an earlier version is never misread.
    messages: `${prefix}history`,
    sequence: `${prefix}history:sequence`,
    quoteKey: `${prefix}quote`,
    channel: `${prefix}changes`,
    generation: `${prefix}generation`,
    /** Written by `/readyz`'s probe, expiring in 10 s. */
    readiness: `${prefix}readiness`,
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

const CHECK_INTERVAL_MS = 1000;

export class RedisKernel implements ChangeFeed, StoreHealth {
  readonly gate: CommandGate;
  readonly writes: SettledWrites;
  readonly keys: ReturnType<typeof keysOf>;
  #epoch = 0;
  #subscribed = false;
  /** A sequence Redis lost goes on above it (docs/redis.md, "Faults"). */
  highestId = 0;
  /** A Redis emptied under the service loses it. */
  #generation: string | null = null;
  #checker: ReturnType<typeof setInterval> | undefined;
  #checking = false;
  #listeners = new ChangeListeners();
  #hearers: ((notice: Notice) => void)[] = [];

  constructor(
    private readonly client: RedisConnection,
    private readonly subscriber: RedisConnection,
    options: GateOptions & SettledWritesOptions,
  ) {
    this.keys = keysOf(options.prefix);
    this.gate = new CommandGate(client, options);
    this.writes = new SettledWrites(client, this.gate, options);
  }

  /** Subscribes, then checks every second; a failed check is tried again at the next. */
  async start(): Promise<void> {
    // Every (re)connection starts an epoch: copies taken before may have missed a change.
    this.subscriber.onReady(() => {
      this.#epoch++;
      this.#subscribed = true;
    });
    // Changes may be missed from now on: readers must start again.
    this.subscriber.onLost(() => {
      this.#subscribed = false;
      this.#listeners.emit({ kind: "reset" });
    });
    await this.subscriber.subscribe(
      this.keys.channel,
      (text: string) => this.#notice(text),
    );
    this.#subscribed = true;
    await this.check();
    this.#checker = setInterval(
      () => this.check().catch(() => {}),
      CHECK_INTERVAL_MS,
    );
  }

  read<T>(send: (client: RedisConnection) => Promise<T>): Promise<T> {
    return this.gate.read(() => send(this.client));
  }

  script<N extends ScriptName>(
    name: N,
    keys: Record<KeysOf<N>, string>,
    args: Record<ArgsOf<N>, string>,
    rest?: readonly string[],
  ): Promise<unknown> {
    return this.read((c) => c.run(...callOf(name, keys, args, rest)));
  }

  /** Before listeners hear of it. */
  onNotice(hear: (notice: Notice) => void): void {
    this.#hearers.push(hear);
  }

  sawId(id: number): void {
    if (id > this.highestId) this.highestId = id;
  }

  /** Reads Redis's clock (for the fences) and newest id, removes stale records, adopts a lost generation anew. */
  async check(): Promise<void> {
    if (this.#checking) return;
    this.#checking = true;
    try {
      const before = Date.now();
      const { redisNow, generation: found, newestId } = checkReply(
        await this.script("check", this.keys, {}),
      );
      this.writes.observeClock(redisNow, before, Date.now());
      if (newestId < this.highestId) {
        const floor = String(this.highestId);
        await this.script("raiseSequence", this.keys, { floor });
      }
      this.sawId(newestId);
      await this.writes.tick();
      if (found !== null && found === this.#generation) return;
      if (this.#generation !== null) this.#emptied();
      const { generation } = this.keys;
      await this.read((c) => c.setIfAbsent(generation, crypto.randomUUID()));
      this.#generation = await this.read((c) => c.get(generation));
    } catch (error) {
      // Requests meanwhile see Redis's state.
      if (this.#generation === null) throw error;
    } finally {
      this.#checking = false;
    }
  }

  #emptied(): void {
    this.#generation = null;
    this.#epoch++;
    this.#listeners.emit({ kind: "reset" });
  }

  /** A copy from an emptied Redis is not kept. */
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

  #notice(text: string): void {
    const notice = decodeNotice(text);
    if (notice === undefined) return;
    if (notice.kind === "message") this.sawId(notice.id);
    for (const hear of this.#hearers) hear(notice);
    if (notice.kind !== "registered" && notice.kind !== "limited") {
      this.#listeners.emit(notice);
    }
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    return this.#listeners.subscribe(listener);
  }

  /** `undefined` while not subscribed: changes may be missed. */
  subscriptionEpoch(): number | undefined {
    return this.#subscribed && this.subscriber.isReady
      ? this.#epoch
      : undefined;
  }

  async isReady(): Promise<Readiness> {
    if (this.subscriptionEpoch() === undefined) {
      return notReady("no subscription: this process cannot hear of changes");
    }
    if (this.writes.refusing) {
      return notReady(
        "replicas have not confirmed earlier writes: new writes are refused",
      );
    }
    try {
      await this.read((c) => c.probeWrite(this.keys.readiness));
      return { ready: true };
    } catch (error) {
      return notReady(readinessReason(error));
    }
  }

  /** The caller closes the connections. */
  close(): Promise<PromiseSettledResult<void>[]> {
    clearInterval(this.#checker);
    this.writes.close();
    this.gate.close();
    return Promise.allSettled([this.subscriber.close(), this.client.close()]);
  }
}

const notReady = (reason: string): Readiness => ({ ready: false, reason });

const REFUSALS = new Map([
  ["OOM", "out of memory: Redis refuses writes (maxmemory)"],
  ["READONLY", "read-only replica: Redis refuses writes"],
  ["MISCONF", "Redis cannot save its data (MISCONF) and refuses writes"],
  ["LOADING", "Redis is loading its data"],
]);

function readinessReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const refused = /Redis refused: (\w+)/.exec(message)?.[1];
  if (refused === undefined) return `unreachable: ${message}`;
  return REFUSALS.get(refused) ??
    `Redis refuses writes: ${message.slice("Redis refused: ".length)}`;
}
