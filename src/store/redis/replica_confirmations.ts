/**
 * Asking Redis whether enough replicas hold a connection's writes (docs/redis.md, Replica confirmations).
 * @module
 */

import type { CommandGate } from "./command_gate.ts";
import type { RedisConnection } from "./redis_connection.ts";

/** One `WAIT` at a time, shared by every write answered before it is sent. */
export class ReplicaConfirmations {
  #waiting = false;
  #next: (PromiseWithResolvers<boolean> & { session: number }) | undefined;

  constructor(
    private readonly connection: Pick<RedisConnection, "session" | "wait">,
    private readonly gate: CommandGate,
    private readonly replicas: number,
    readonly timeoutMs: number,
  ) {}

  /** False at the timeout, when unsent, and at once on another session (its `WAIT` would not count them). */
  confirm(session: number): Promise<boolean> {
    if (session !== this.connection.session) return Promise.resolve(false);
    if (!this.#waiting) return this.#send(session);
    if (this.#next?.session !== session) {
      this.#next?.resolve(false);
      this.#next = { ...Promise.withResolvers<boolean>(), session };
    }
    return this.#next.promise;
  }

  #send(session: number): Promise<boolean> {
    if (session !== this.connection.session) return Promise.resolve(false);
    this.#waiting = true;
    return this.gate.read(() =>
      this.connection.wait(this.replicas, this.timeoutMs)
    ).then(
      (held) => held >= this.replicas,
      () => false,
    ).finally(() => {
      this.#waiting = false;
      const next = this.#next;
      this.#next = undefined;
      if (next) next.resolve(this.#send(next.session));
    });
  }
}
