/**
 * Asking Redis whether enough replicas hold a connection's writes (`WAIT`;
 * docs/redis.md, Replica confirmations).
 * @module
 */

import type { CommandGate } from "./command_gate.ts";
import type { RedisConnection } from "./redis_connection.ts";

export interface ConfirmationOptions {
  replicas: number;
  timeoutMs: number;
}

interface Next {
  session: number;
  confirmed: PromiseWithResolvers<boolean>;
}

/** One `WAIT` at a time, shared by every write answered before it is sent. */
export class ReplicaConfirmations {
  #waiting = false;
  #next: Next | undefined;

  constructor(
    private readonly connection: Pick<RedisConnection, "session" | "wait">,
    private readonly gate: CommandGate,
    readonly options: ConfirmationOptions,
  ) {}

  /** False at the timeout, when unsent, and at once on another session (its `WAIT` would not count them). */
  confirm(session: number): Promise<boolean> {
    if (session !== this.connection.session) return Promise.resolve(false);
    if (!this.#waiting) return this.#send(session);
    if (this.#next?.session !== session) {
      this.#next?.confirmed.resolve(false);
      this.#next = { session, confirmed: Promise.withResolvers<boolean>() };
    }
    return this.#next.confirmed.promise;
  }

  #send(session: number): Promise<boolean> {
    if (session !== this.connection.session) return Promise.resolve(false);
    this.#waiting = true;
    return this.gate.read(() =>
      this.connection.wait(this.options.replicas, this.options.timeoutMs)
    ).then(
      (held) => held >= this.options.replicas,
      () => false,
    ).finally(() => {
      this.#waiting = false;
      const next = this.#next;
      this.#next = undefined;
      if (next) next.confirmed.resolve(this.#send(next.session));
    });
  }
}
