/**
 * Who is online across processes, and forgetting idle users (docs/redis.md, Presence across processes).
 * @module
 */

import { type Awaitable, forgetSweepMs } from "../store.ts";
import type { RedisKernel } from "./kernel.ts";
import { LocalCopy } from "./local_copy.ts";
import { isString, listOf, oneOf, UnexpectedReply } from "./replies.ts";

/** So no script holds Redis long. */
const BATCH = 1000;

/** How many scripts one round of work may send before it yields. */
const ROUNDS = 100;

const RETRY_MS = 1000;

function missing(a: ReadonlySet<string>, b: ReadonlySet<string>): string[] {
  const names: string[] = [];
  for (const name of a) {
    if (!b.has(name)) names.push(name);
    if (names.length === BATCH) break;
  }
  return names;
}

/** One process's presence in Redis; beats every quarter heartbeat, and a record lives two. */
export class RedisPresence {
  #pid = crypto.randomUUID();
  #lifetimeMs: number;
  #forgetAfterMs: number | undefined;
  #wanted = new Set<string>();
  /** As last confirmed. */
  #announced = new Set<string>();
  /** Redis may hold something else than `announced`. */
  #uncertain = false;
  #sending: Promise<void> | undefined;
  #again = false;
  #retry: ReturnType<typeof setTimeout> | undefined;
  #timers: ReturnType<typeof setInterval>[] = [];
  #touched = new Set<string>();
  #online: LocalCopy<ReadonlySet<string>>;
  #closed = false;

  constructor(
    private readonly kernel: RedisKernel,
    heartbeatMs: number,
    forget?: number,
  ) {
    this.#lifetimeMs = 2 * heartbeatMs;
    this.#online = new LocalCopy(kernel);
    kernel.onNotice(({ kind }) => {
      if (kind === "unregistered" || kind === "presence") {
        this.#online.changed();
      }
    });
    const beatMs = Math.max(5, heartbeatMs / 4);
    this.#timers.push(setInterval(() => this.#beat(), beatMs));
    if (forget !== undefined) {
      this.#forgetAfterMs = forget * 1000;
      this.#timers.push(
        setInterval(() => this.#sweep(), forgetSweepMs(forget)),
      );
    }
  }

  online(name: string): void {
    this.#wanted.add(name);
    this.#send();
  }

  offline(name: string): void {
    this.#wanted.delete(name);
    this.#send();
  }

  touch(name: string): void {
    if (this.#forgetAfterMs !== undefined) this.#touched.add(name);
  }

  onlineNames(): Awaitable<ReadonlySet<string>> {
    return this.#online.read(async () =>
      new Set(listOf<string[]>(
        "onlineNames",
        await this.kernel.script("onlineNames", this.kernel.keys, {}),
        isString,
      ))
    );
  }

  /** Answers whether this process's record was still there. */
  async #run(
    mode: "change" | "set" | "retire",
    enter: string[],
    leave: string[] = [],
  ): Promise<boolean> {
    const reply = await this.kernel.script(
      "presence",
      this.kernel.keys,
      {
        pid: this.#pid,
        lifetime: String(this.#lifetimeMs),
        mode,
        count: String(enter.length),
      },
      [...enter, ...leave],
    );
    return oneOf("presence", reply, ["ok", "gone"]) === "ok";
  }

  /** A failure makes the next attempt say the whole set. */
  #send(): void {
    if (this.#closed) return;
    if (this.#sending) {
      this.#again = true;
      return;
    }
    this.#sending = this.#sendAll().finally(() => {
      this.#sending = undefined;
      if (this.#again) this.#send();
    });
  }

  async #sendAll(): Promise<void> {
    this.#again = false;
    clearTimeout(this.#retry);
    let settled = false;
    try {
      for (let round = 0; round < ROUNDS && !settled; round++) {
        if (this.#uncertain) {
          const names = [...this.#wanted];
          // A beat that finds the record gone meanwhile sets it again.
          this.#uncertain = false;
          await this.#run("set", names);
          this.#announced = new Set(names);
          continue;
        }
        const enter = missing(this.#wanted, this.#announced);
        const leave = missing(this.#announced, this.#wanted);
        settled = enter.length === 0 && leave.length === 0;
        if (settled) break;
        const kept = await this.#run("change", enter, leave);
        for (const name of enter) this.#announced.add(name);
        for (const name of leave) this.#announced.delete(name);
        // The record was swept: Redis holds only the names this script entered.
        if (!kept && this.#announced.size > enter.length) {
          this.#uncertain = true;
        }
      }
    } catch {
      // Redis may have taken it or not.
      this.#uncertain = true;
    }
    if (this.#closed) return;
    if (this.#uncertain) {
      this.#retry = setTimeout(() => this.#send(), RETRY_MS);
    } else if (!settled) {
      // Let the process breathe.
      this.#retry = setTimeout(() => this.#send(), 0);
    }
  }

  /** A record found gone (swept during a stall, or Redis emptied) makes it say its whole set again. */
  async #beat(): Promise<void> {
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const reply = await this.kernel.script(
          "presenceBeat",
          this.kernel.keys,
          {
            pid: this.#pid,
            lifetime: String(this.#lifetimeMs),
            limit: String(BATCH),
          },
        );
        const [kept, more] = listOf<[number, number]>(
          "presenceBeat",
          reply,
          (flag) => flag === 0 || flag === 1,
          2,
        );
        if (kept === 0) this.#recordLost();
        if (more === 0) break;
      }
    } catch {
      // A lost reply may have said the record was gone; later beats find it put back.
      this.#recordLost();
    }
    if (this.#uncertain) this.#send();
  }

  /** The record was or may have been swept: what it held (or a script on its way entered) is said again. */
  #recordLost(): void {
    if (this.#announced.size > 0 || this.#sending !== undefined) {
      this.#uncertain = true;
    }
  }

  async #sweep(): Promise<void> {
    const kernel = this.kernel;
    try {
      for (let round = 0; round < ROUNDS && this.#touched.size > 0; round++) {
        const names = [...this.#touched].slice(0, BATCH);
        await kernel.script("touchUsers", kernel.keys, {}, names);
        for (const name of names) this.#touched.delete(name);
      }
      for (let round = 0; round < ROUNDS; round++) {
        const forgotten = await kernel.script("forgetIdle", kernel.keys, {
          idleMs: String(this.#forgetAfterMs),
          limit: String(BATCH),
        });
        if (typeof forgotten !== "number") {
          throw new UnexpectedReply("forgetIdle", forgotten);
        }
        if (forgotten < BATCH) break;
      }
    } catch {
      // Noted activity stays noted; the next sweep tries again.
    }
  }

  /** Its users go offline now, not at its expiry. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    for (const timer of this.#timers) clearInterval(timer);
    try {
      await this.#sending;
      await this.#run("retire", []);
    } catch {
      // Redis is out of reach: the record expires by itself.
    }
  }
}
