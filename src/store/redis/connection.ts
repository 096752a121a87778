/**
 * The node-redis side of {@linkcode RedisConnection}, loaded only when a
 * Redis store connects. A connection fails fast at start-up, reconnects
 * forever afterwards, never queues a command while disconnected, and
 * reports losing and regaining the connection once each.
 * @module
 */

import {
  ClientClosedError,
  ClientOfflineError,
  createClient,
  defineScript,
  ErrorReply,
} from "redis";
import { StoreUnavailableError } from "../store.ts";
import {
  CommandFailed,
  type ConnectionOptions,
  type RedisConnection,
} from "./redis_connection.ts";
import { type ScriptName, SCRIPTS } from "./scripts.ts";

const scripts = Object.fromEntries(
  Object.entries(SCRIPTS).map(([name, { source, keys }]) => [
    name,
    defineScript({
      SCRIPT: source,
      NUMBER_OF_KEYS: keys,
      parseCommand(parser, keyNames: string[], args: string[]) {
        for (const key of keyNames) parser.pushKey(key);
        parser.push(...args);
      },
      transformReply: (reply: unknown) => reply,
    }),
  ]),
) as Record<ScriptName, ReturnType<typeof defineScript>>;

/**
 * Error replies about the state of Redis, not about the command: out of
 * memory, a password now required, a replica, loading its data, a busy
 * script, a failing disk. The service cannot act on them, so they are
 * answered 503 like an unreachable Redis.
 */
const STATE_REPLY =
  /^(OOM|NOAUTH|WRONGPASS|LOADING|READONLY|MASTERDOWN|BUSY|NOREPLICAS|MISCONF|CLUSTERDOWN|TRYAGAIN|NOPERM)\b/;

/** A URL as it may be shown: without its password. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password === "") return url;
    parsed.password = "***";
    return parsed.href;
  } catch {
    return "(an unparsable URL)";
  }
}

/** Connects `role` (named in reports), or throws {@linkcode StoreUnavailableError}. */
export async function connect(
  options: ConnectionOptions,
  role: string,
): Promise<RedisConnection> {
  let ready = false;
  let down = false;
  let closed = false;
  const lost: (() => void)[] = [];
  /** Those waiting for the connection to come back. */
  const waiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const client = createClient({
    url: options.url,
    scripts,
    // Fail a command at once while disconnected rather than queue it:
    // a request waiting on a dead connection would hang.
    disableOfflineQueue: true,
    // The store times every command itself, with one timer for all (its
    // command timeout, 1 s by default). node-redis's own default, 5 s, arms
    // an AbortSignal.timeout per command that it stops heeding once the
    // command is written but that stays armed for the 5 s, which held far
    // more memory under load (see bench/results/profiles/redis_writes.md).
    commandOptions: { timeout: 0 },
    socket: {
      connectTimeout: options.connectTimeoutMs,
      // Before the first connection, give up: start-up must fail fast.
      // After it, retry forever, backing off up to a second.
      reconnectStrategy: (retries: number, cause: Error) =>
        ready ? Math.min(50 * 2 ** retries, 1000) : cause,
    },
  });
  client.on("error", (error: Error) => {
    if (ready && !down) {
      down = true;
      options.report(
        `redis (${role}): connection lost: ${error.message}; retrying`,
        "error",
      );
      for (const listener of lost) listener();
    }
  });
  client.on("ready", () => {
    if (down) options.report(`redis (${role}): connection restored`, "info");
    down = false;
    for (const waiter of waiters.splice(0)) waiter.resolve();
  });
  try {
    await client.connect();
  } catch (error) {
    client.destroy();
    throw new StoreUnavailableError(
      `cannot connect to Redis at ${redactUrl(options.url)}: ${
        (error as Error).message || error
      }`,
      { cause: error },
    );
  }
  ready = true;

  /**
   * A reply Redis sent as an error stays a fault unless it is about Redis's
   * state; a command the client would not send never left; anything else
   * (the socket failed while the command was queued, written or awaiting
   * its reply) may have run.
   */
  const translate = (error: unknown): never => {
    if (error instanceof ErrorReply) {
      if (!STATE_REPLY.test(error.message)) throw error;
      options.report(
        `redis (${role}): ${error.message.split("\n")[0]}`,
        "error",
      );
      throw new CommandFailed("refused", `Redis refused: ${error.message}`, {
        cause: error,
      });
    }
    if (
      error instanceof ClientOfflineError || error instanceof ClientClosedError
    ) {
      throw new CommandFailed("unsent", "Redis is unavailable", {
        cause: error,
      });
    }
    throw new CommandFailed("unknown", "the connection to Redis was lost", {
      cause: error,
    });
  };
  const command = <T>(promise: Promise<T>): Promise<T> =>
    promise.catch(translate);

  return {
    get isReady() {
      return client.isReady;
    },
    onReady(listener) {
      client.on("ready", listener);
    },
    onLost(listener) {
      lost.push(listener);
    },
    whenReady() {
      if (closed) {
        return Promise.reject(new StoreUnavailableError("the store is closed"));
      }
      if (client.isReady) return Promise.resolve();
      return new Promise((resolve, reject) =>
        waiters.push({ resolve, reject })
      );
    },
    run(script, keys, args) {
      return command(
        (client as unknown as Record<
          ScriptName,
          (keys: string[], args: string[]) => Promise<unknown>
        >)[script](keys, args),
      );
    },
    async ping() {
      await command(client.ping());
    },
    setIfAbsent: async (key, value) =>
      (await command(client.set(key, value, { condition: "NX" }))) === "OK",
    get: (key) => command(client.get(key)),
    hGet: (key, field) => command(client.hGet(key, field)),
    hLen: (key) => command(client.hLen(key)),
    lRange: (key, start, stop) => command(client.lRange(key, start, stop)),
    zRange: (key, start, stop) => command(client.zRange(key, start, stop)),
    async unlink(keys) {
      await command(client.unlink(keys));
    },
    async subscribe(channel, listener) {
      await command(client.subscribe(channel, listener));
    },
    async close() {
      closed = true;
      const error = new StoreUnavailableError("the store is closed");
      for (const waiter of waiters.splice(0)) waiter.reject(error);
      await client.close().catch(() => client.destroy());
    },
  };
}
