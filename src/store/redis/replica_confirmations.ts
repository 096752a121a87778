/**
 * Asking Redis whether enough replicas hold a connection's writes (`WAIT`;
 * docs/redis.md, Replica confirmations).
 * @module
 */

import type { CommandGate } from "./command_gate.ts";
import type { RedisConnection } from "./redis_connection.ts";

/** Options of {@linkcode ReplicaConfirmations}. */
export interface ConfirmationOptions {
  /** How many replicas must hold a write. */
  replicas: number;
  /** How long one `WAIT` may wait for them, in ms. */
  timeoutMs: number;
}

/** The next `WAIT`, waited for by the writes answered since the last was sent. */
interface Next {
  session: number;
  confirmed: PromiseWithResolvers<boolean>;
}

/**
 * Confirms writes by `WAIT`, one at a time on the connection, shared by
 * every write answered before it is sent.
 *
 * @example Confirming a write
 * ```ts ignore
 * const confirmations = new ReplicaConfirmations(connection, gate, { replicas: 1, timeoutMs: 250 });
 * const session = connection.session;
 * await connection.run("setQuote", keys, args);
 * const held = await confirmations.confirm(session); // false: ask again, or send the write again
 * ```
 */
export class ReplicaConfirmations {
  #connection: Pick<RedisConnection, "session" | "wait">;
  #gate: CommandGate;
  #replicas: number;
  #timeoutMs: number;
  /** Whether a `WAIT` is waiting for its answer. */
  #waiting = false;
  #next: Next | undefined;

  /** Confirmations on `connection`, sent through `gate`. */
  constructor(
    connection: Pick<RedisConnection, "session" | "wait">,
    gate: CommandGate,
    options: ConfirmationOptions,
  ) {
    this.#connection = connection;
    this.#gate = gate;
    this.#replicas = options.replicas;
    this.#timeoutMs = options.timeoutMs;
  }

  /** How long one `WAIT` may wait, in ms. */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /**
   * Whether enough replicas hold every write whose reply came in
   * `session` (the connection's session when it was sent) until now.
   * False when they did not within the timeout, when the `WAIT` could not
   * be sent, and at once when the connection is no longer that session's
   * (a `WAIT` on another connection would not count those writes).
   */
  confirm(session: number): Promise<boolean> {
    if (session !== this.#connection.session) return Promise.resolve(false);
    if (!this.#waiting) return this.#send(session);
    if (this.#next?.session !== session) {
      this.#next?.confirmed.resolve(false);
      this.#next = { session, confirmed: Promise.withResolvers<boolean>() };
    }
    return this.#next.confirmed.promise;
  }

  /** Sends a `WAIT` for the writes of `session` answered so far. */
  #send(session: number): Promise<boolean> {
    if (session !== this.#connection.session) return Promise.resolve(false);
    this.#waiting = true;
    return this.#gate.read(() =>
      this.#connection.wait(this.#replicas, this.#timeoutMs)
    ).then(
      (held) => held >= this.#replicas,
      () => false,
    ).finally(() => {
      this.#waiting = false;
      const next = this.#next;
      this.#next = undefined;
      if (next) next.confirmed.resolve(this.#send(next.session));
    });
  }
}
