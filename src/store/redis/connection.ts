/**
 * The node-redis side of {@linkcode RedisConnection}, loaded only when a
 * Redis store connects. A connection fails fast at start-up, reconnects
 * forever afterwards, never queues a command while disconnected, and
 * reports losing and regaining the connection once each.
 *
 * A `redis://` URL names one server, reconnected to by node-redis itself. A
 * `redis+sentinel://` URL names sentinels: the connection asks them for the
 * master (`sentinel.ts`), checks with `ROLE` that the server it reaches is
 * the master, and when that connection is lost, or the server answers that
 * it has become a replica (`READONLY`), it drops it and asks the sentinels
 * again, so it follows every failover. Sentinel itself closes the clients
 * of a server it demotes, so a connection never stays on an old master.
 *
 * node-redis has a Sentinel client of its own (`createSentinel`), which the
 * store does not use: it retries a command on another master by itself (up
 * to 16 times, waiting for a new topology in between), so a command that
 * failed could not be told from one that never left or one that may have
 * run, which is what settling writes rests on (`settled_writes.ts`); it
 * moves its subscription to a new master without saying that notices may
 * have been missed meanwhile, which the local copies and the event streams
 * must know (`local_copy.ts`); and it never checks the role of the server
 * it reaches.
 * @module
 */

import {
  ClientClosedError,
  ClientOfflineError,
  createClient,
  defineScript,
  ErrorReply,
  type RedisClientOptions,
} from "redis";
import { StoreUnavailableError } from "../store.ts";
import {
  CommandFailed,
  type ConnectionOptions,
  type RedisConnection,
} from "./redis_connection.ts";
import { type ScriptName, SCRIPTS } from "./scripts.ts";
import { locateMasters } from "./sentinel.ts";
import { repeatedFaults } from "./repeated_faults.ts";
import {
  type HostPort,
  parseSentinelUrl,
  redactUrl,
  type SentinelAddress,
} from "./store_url.ts";

const scripts = Object.fromEntries(
  Object.entries(SCRIPTS).map(([name, { source, keys }]) => [
    name,
    defineScript({
      SCRIPT: source,
      NUMBER_OF_KEYS: keys.length,
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

/** A refusal that repeats is logged once per kind per this window, with its count. */
const REPEATED_FAULT_WINDOW_MS = 10_000;

/** How often a connection through Sentinel asks the sentinels whether they still name its master. */
const MASTER_CHECK_MS = 1000;

/** How long a connection through Sentinel waits between two rounds of looking for the master: up to this, doubling from 50 ms. */
const RELOCATE_PAUSE_MS = 200;

/** A node-redis client with the store's scripts that fails a command at once while disconnected. */
function newClient(
  options: Pick<
    RedisClientOptions,
    "url" | "socket" | "database" | "username" | "password"
  >,
) {
  return createClient({
    ...options,
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
  });
}

type Client = ReturnType<typeof newClient>;

/** A waiter for the connection to come back. */
interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

/**
 * What a connection's driver (one server, or a master found through
 * Sentinel) controls of it: which client commands go to, and when it is up.
 */
interface Link {
  readonly client: Client | undefined;
  readonly closed: boolean;
  /** Makes `client` the one commands go to (none: every command fails unsent). */
  use(client: Client | undefined): void;
  /** The current client is connected (and subscribed): a new session begins. */
  up(restored: string): void;
  /** The connection was lost: said once, until it is up again. */
  down(why: string): void;
  /** Resolves after `ms`, or at once when the connection closes. */
  pause(ms: number): Promise<void>;
  /** The channels subscribed to, for a client that replaces the current one. */
  readonly subscriptions: [string, (message: string) => void][];
  /** Told when the current client's server answers that it is a replica. */
  demoted: (client: Client) => void;
  /** A client being connected, not yet current: destroyed if the connection closes meanwhile. */
  opening: Client | undefined;
  /** Keeps `work` (finding or watching the master) to wait for on closing. */
  track(work: Promise<void>): void;
}

/**
 * One connection as the store sees it, over whichever client is current,
 * and its driver's controls. Every command fails with
 * {@linkcode CommandFailed} when Redis cannot answer. A plain object, so
 * that a test may wrap it (`Object.create`) and replace one command.
 */
// deno-lint-ignore lms/max-function-lines -- too long; split by the 0.3.0 redesign
function createLink(
  role: string,
  report: ConnectionOptions["report"],
): { connection: RedisConnection; link: Link } {
  let client: Client | undefined;
  let up = false;
  let wasUp = false;
  let session = 0;
  let closed = false;
  const closing = Promise.withResolvers<void>();
  const readyListeners: (() => void)[] = [];
  const lostListeners: (() => void)[] = [];
  const waiters: Waiter[] = [];
  const background = new Set<Promise<void>>();
  const isReady = () => up && client?.isReady === true;
  const refusals = repeatedFaults(
    (line) => report(line, "error"),
    REPEATED_FAULT_WINDOW_MS,
  );

  const link: Link = {
    get client() {
      return client;
    },
    get closed() {
      return closed;
    },
    use(next) {
      client = next;
    },
    up(restored) {
      session++;
      up = true;
      if (wasUp) report(`redis (${role}): ${restored}`, "info");
      wasUp = true;
      for (const waiter of waiters.splice(0)) waiter.resolve();
      for (const listener of readyListeners) listener();
    },
    down(why) {
      if (!up) return;
      up = false;
      report(`redis (${role}): ${why}`, "error");
      for (const listener of lostListeners) listener();
    },
    async pause(ms) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        closing.promise,
        new Promise((resolve) => timer = setTimeout(resolve, ms)),
      ]);
      clearTimeout(timer);
    },
    subscriptions: [],
    demoted: () => {},
    opening: undefined,
    track(work) {
      background.add(work);
      work.finally(() => background.delete(work));
    },
  };

  /**
   * A reply Redis sent as an error stays a fault unless it is about Redis's
   * state; a command the client would not send never left; anything else
   * (the socket failed while the command was queued, written or awaiting
   * its reply) may have run.
   */
  const command = <T>(send: (client: Client) => Promise<T>): Promise<T> => {
    const current = client;
    if (current === undefined) {
      return Promise.reject(
        new CommandFailed("unsent", "Redis is unavailable"),
      );
    }
    return send(current).catch((error: unknown): never => {
      if (error instanceof ErrorReply) {
        if (!STATE_REPLY.test(error.message)) throw error;
        refusals.report(
          error.message.split(" ")[0]!,
          `redis (${role}): ${error.message.split("\n")[0]}`,
        );
        if (error.message.startsWith("READONLY")) link.demoted(current);
        throw new CommandFailed("refused", `Redis refused: ${error.message}`, {
          cause: error,
        });
      }
      if (
        error instanceof ClientOfflineError ||
        error instanceof ClientClosedError
      ) {
        throw new CommandFailed("unsent", "Redis is unavailable", {
          cause: error,
        });
      }
      throw new CommandFailed("unknown", "the connection to Redis was lost", {
        cause: error,
      });
    });
  };

  const connection: RedisConnection = {
    get isReady() {
      return isReady();
    },
    get session() {
      return session;
    },
    onReady(listener) {
      readyListeners.push(listener);
    },
    onLost(listener) {
      lostListeners.push(listener);
    },
    whenReady() {
      if (closed) {
        return Promise.reject(new StoreUnavailableError("the store is closed"));
      }
      if (isReady()) return Promise.resolve();
      return new Promise((resolve, reject) =>
        waiters.push({ resolve, reject })
      );
    },
    run: (script, keys, args) =>
      command((c) =>
        (c as unknown as Record<
          ScriptName,
          (keys: string[], args: string[]) => Promise<unknown>
        >)[script](keys, args)
      ),
    async ping() {
      await command((c) => c.ping());
    },
    async probeWrite(key) {
      await command((c) =>
        c.set(key, "1", { expiration: { type: "PX", value: 10_000 } })
      );
    },
    wait: (replicas, timeoutMs) => command((c) => c.wait(replicas, timeoutMs)),
    setIfAbsent: async (key, value) =>
      (await command((c) => c.set(key, value, { condition: "NX" }))) === "OK",
    get: (key) => command((c) => c.get(key)),
    hGet: (key, field) => command((c) => c.hGet(key, field)),
    hLen: (key) => command((c) => c.hLen(key)),
    lRange: (key, start, stop) => command((c) => c.lRange(key, start, stop)),
    zRange: (key, start, stop) => command((c) => c.zRange(key, start, stop)),
    async unlink(keys) {
      await command((c) => c.unlink(keys));
    },
    async subscribe(channel, listener) {
      link.subscriptions.push([channel, listener]);
      await command((c) => c.subscribe(channel, listener));
    },
    async close() {
      closed = true;
      closing.resolve();
      refusals.close();
      const error = new StoreUnavailableError("the store is closed");
      for (const waiter of waiters.splice(0)) waiter.reject(error);
      link.opening?.destroy();
      await Promise.all(background);
      const last = client;
      client = undefined;
      await last?.close().catch(() => last.destroy());
    },
  };
  return { connection, link };
}

/** Connects `role` (named in reports), or throws {@linkcode StoreUnavailableError}. */
export function connect(
  options: ConnectionOptions,
  role: string,
): Promise<RedisConnection> {
  const sentinel = parseSentinelUrl(options.url);
  return sentinel === undefined
    ? connectDirect(options, role)
    : connectThroughSentinel(options, role, sentinel);
}

/** One server, which node-redis reconnects to by itself (resubscribing before it reports ready). */
async function connectDirect(
  options: ConnectionOptions,
  role: string,
): Promise<RedisConnection> {
  const { connection, link } = createLink(role, options.report);
  let started = false;
  const client = newClient({
    url: options.url,
    socket: {
      connectTimeout: options.connectTimeoutMs,
      // Before the first connection, give up: start-up must fail fast.
      // After it, retry forever, backing off up to a second.
      reconnectStrategy: (retries: number, cause: Error) =>
        started ? Math.min(50 * 2 ** retries, 1000) : cause,
    },
  });
  client.on(
    "error",
    (error: Error) => link.down(`connection lost: ${error.message}; retrying`),
  );
  client.on("ready", () => {
    if (started) link.up("connection restored");
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
  started = true;
  link.use(client);
  link.up("connection restored");
  return connection;
}

/**
 * The master that the sentinels name: a client connected to it, checked
 * with `ROLE`, and subscribed to what `link` is subscribed to. The
 * addresses named are tried in turn (`sentinel.ts`). Throws, saying why,
 * when none is the master yet.
 */
async function openMaster(
  link: Link,
  options: ConnectionOptions,
  address: SentinelAddress,
): Promise<{ client: Client; master: HostPort }> {
  let failure: unknown;
  for (const master of await locateMasters(address)) {
    try {
      return { client: await openNode(link, options, address, master), master };
    } catch (error) {
      failure = error;
    }
  }
  throw failure;
}

/** A client connected to `master`, checked with `ROLE` and subscribed to what `link` is subscribed to. */
async function openNode(
  link: Link,
  options: ConnectionOptions,
  address: SentinelAddress,
  master: HostPort,
): Promise<Client> {
  const client = newClient({
    socket: {
      host: master.host,
      port: master.port,
      connectTimeout: options.connectTimeoutMs,
      // A lost connection is not tried again on the same address: the
      // master may have moved, so the sentinels are asked first.
      reconnectStrategy: false,
    },
    database: address.database,
    username: address.username,
    password: address.password,
  });
  // Until the client is adopted, its failures are this function's.
  client.on("error", () => {});
  link.opening = client;
  try {
    await client.connect();
    const [role] = await client.sendCommand(["ROLE"]) as [string];
    if (role !== "master") {
      throw new Error(
        `${master.host}:${master.port} is a ${role}, not the master`,
      );
    }
    for (const [channel, listener] of link.subscriptions) {
      await client.subscribe(channel, listener);
    }
  } catch (error) {
    client.destroy();
    throw error;
  } finally {
    link.opening = undefined;
  }
  return client;
}

/** The master of a Sentinel deployment, followed through every failover. */
// deno-lint-ignore lms/max-function-lines -- too long; split by the 0.3.0 redesign
async function connectThroughSentinel(
  options: ConnectionOptions,
  role: string,
  address: SentinelAddress,
): Promise<RedisConnection> {
  const { connection, link } = createLink(role, options.report);
  let relocating = false;
  const lose = (client: Client, why: string) => {
    if (link.client !== client) return;
    link.use(undefined);
    client.destroy();
    link.down(`${why}; asking the sentinels for the master`);
    if (!relocating) link.track(relocate());
  };
  const adopt = (
    { client, master }: Awaited<ReturnType<typeof openMaster>>,
  ) => {
    const at = `${master.host}:${master.port}`;
    client.on(
      "error",
      (error: Error) =>
        lose(client, `connection to the master ${at} lost: ${error.message}`),
    );
    link.use(client);
    link.up(`connected to the master ${at}, found through Sentinel`);
    link.track(watch(client, master));
  };
  // A master that the sentinels took for dead while it still ran (a
  // partition, a stall) stays a master, and keeps its clients, until they
  // reach it again and demote it, which Sentinel does only seconds later;
  // whatever it takes meanwhile is lost. So the sentinels are asked every
  // MASTER_CHECK_MS whether any still names this one, for as long as it is
  // the current client; once none does, it is left. (Any, not most: just
  // after a promotion, most may still name the master that died.)
  const watch = async (client: Client, master: HostPort) => {
    while (link.client === client && !link.closed) {
      await link.pause(MASTER_CHECK_MS);
      if (link.client !== client) return;
      // No answer is no news ([]); an answer names at least one master.
      const named = await locateMasters(address).catch(() => []);
      const [first] = named;
      if (
        first !== undefined && link.client === client &&
        !named.some((n) => n.host === master.host && n.port === master.port)
      ) {
        lose(
          client,
          `the sentinels now name ${first.host}:${first.port} the master`,
        );
      }
    }
  };
  link.demoted = (client) => lose(client, "the master became a replica");
  // Rounds go on until a master answers or the store closes, as
  // node-redis reconnects to one server forever; each round is bounded by
  // the sentinels' and the connection's timeouts.
  const relocate = async () => {
    relocating = true;
    try {
      for (let round = 0; !link.closed; round++) {
        try {
          const opened = await openMaster(link, options, address);
          if (link.closed) opened.client.destroy();
          else adopt(opened);
          return;
        } catch {
          await link.pause(
            Math.min(50 * 2 ** Math.min(round, 8), RELOCATE_PAUSE_MS),
          );
        }
      }
    } finally {
      relocating = false;
    }
  };

  // At start-up, look for the master for as long as one connection attempt
  // may take, then give up: start-up must fail fast.
  const deadline = performance.now() + options.connectTimeoutMs;
  let failure: unknown;
  for (let round = 0; round < 1000; round++) {
    try {
      adopt(await openMaster(link, options, address));
      return connection;
    } catch (error) {
      failure = error;
    }
    if (performance.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new StoreUnavailableError(
    `cannot find the Redis master through Sentinel at ${
      redactUrl(options.url)
    }: ${(failure as Error)?.message || failure}`,
    { cause: failure },
  );
}
