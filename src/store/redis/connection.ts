/**
 * The node-redis side of {@linkcode RedisConnection}, loaded only on connect (docs/redis.md, The connection).
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
import { sleep } from "../../timers/sleep.ts";
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

/** Refusals about Redis's state, not the command: the service cannot act on them, so 503. */
const STATE_REPLY =
  /^(OOM|NOAUTH|WRONGPASS|LOADING|READONLY|MASTERDOWN|BUSY|NOREPLICAS|MISCONF|CLUSTERDOWN|TRYAGAIN|NOPERM)\b/;

const REPEATED_FAULT_WINDOW_MS = 10_000;

const MASTER_CHECK_MS = 1000;

/** Backoff cap between rounds of looking for the master, doubling from 50 ms. */
const RELOCATE_PAUSE_MS = 200;

function newClient(
  options: Pick<
    RedisClientOptions,
    "url" | "socket" | "database" | "username" | "password"
  >,
) {
  return createClient({
    ...options,
    scripts,
    // Queued commands on a dead connection would hang their requests.
    disableOfflineQueue: true,
    // Its timeout stays armed after a reply (docs/architecture.md#one-timer-for-many-waits).
    commandOptions: { timeout: 0 },
  });
}

type Client = ReturnType<typeof newClient>;

/** Start-up's one line, without the password. */
function unreachable(doing: string, url: string, cause: unknown) {
  return new StoreUnavailableError(
    `cannot ${doing} at ${redactUrl(url)}: ${
      (cause as Error)?.message || cause
    }`,
    { cause },
  );
}

/** `closed` is final. */
type LinkState = "starting" | "up" | "down" | "closed";

/** What a driver (one server, or Sentinel) controls: the current client and whether it is up. */
class Link {
  state: LinkState = "starting";
  /** None: every command fails unsent. */
  client: Client | undefined;
  /** A write is known in its own session only. */
  session = 0;
  /** For a client that replaces the current one. */
  readonly subscriptions: [string, (message: string) => void][] = [];
  demoted: (client: Client) => void = () => {};
  /** Destroyed if the link closes meanwhile. */
  opening: Client | undefined;
  readonly readyListeners: (() => void)[] = [];
  readonly lostListeners: (() => void)[] = [];
  readonly #waiters: PromiseWithResolvers<void>[] = [];
  readonly #background = new Set<Promise<void>>();
  readonly #closing = new AbortController();
  readonly #refusals: ReturnType<typeof repeatedFaults>;

  constructor(
    readonly role: string,
    readonly report: ConnectionOptions["report"],
  ) {
    this.#refusals = repeatedFaults(
      (line) => report(line, "error"),
      REPEATED_FAULT_WINDOW_MS,
    );
  }

  get closed(): boolean {
    return this.state === "closed";
  }

  get isReady(): boolean {
    return this.state === "up" && this.client?.isReady === true;
  }

  up(restored: string): void {
    if (this.closed) return;
    if (this.state !== "starting") {
      this.report(`redis (${this.role}): ${restored}`, "info");
    }
    this.state = "up";
    this.session++;
    for (const waiter of this.#waiters.splice(0)) waiter.resolve();
    for (const listener of this.readyListeners) listener();
  }

  /** Said once, until it is up again. */
  down(why: string): void {
    if (this.state !== "up") return;
    this.state = "down";
    this.report(`redis (${this.role}): ${why}`, "error");
    for (const listener of this.lostListeners) listener();
  }

  whenReady(): Promise<void> {
    if (this.closed) {
      return Promise.reject(new StoreUnavailableError("the store is closed"));
    }
    if (this.isReady) return Promise.resolve();
    const waiter = Promise.withResolvers<void>();
    this.#waiters.push(waiter);
    return waiter.promise;
  }

  pause(ms: number): Promise<void> {
    return sleep(ms, this.#closing.signal);
  }

  /** Waited for on closing. */
  track(work: Promise<void>): void {
    this.#background.add(work);
    work.finally(() => this.#background.delete(work));
  }

  /** An error reply is a fault unless about Redis's state; a command never sent never ran; else it may have. */
  command<T>(send: (client: Client) => Promise<T>): Promise<T> {
    const current = this.client;
    if (current === undefined) {
      return Promise.reject(
        new CommandFailed("unsent", "Redis is unavailable"),
      );
    }
    return send(current).catch((error: unknown): never => {
      if (error instanceof ErrorReply) {
        if (!STATE_REPLY.test(error.message)) throw error;
        const line = error.message.split("\n")[0];
        this.#refusals.report(
          error.message.split(" ")[0]!,
          `redis (${this.role}): ${line}`,
        );
        if (error.message.startsWith("READONLY")) this.demoted(current);
        throw new CommandFailed("refused", `Redis refused: ${error.message}`, {
          cause: error,
        });
      }
      const unsent = error instanceof ClientOfflineError ||
        error instanceof ClientClosedError;
      throw unsent
        ? new CommandFailed("unsent", "Redis is unavailable", { cause: error })
        : new CommandFailed("unknown", "the connection to Redis was lost", {
          cause: error,
        });
    });
  }

  async close(): Promise<void> {
    this.state = "closed";
    this.#closing.abort();
    this.#refusals.close();
    const error = new StoreUnavailableError("the store is closed");
    for (const waiter of this.#waiters.splice(0)) waiter.reject(error);
    this.opening?.destroy();
    await Promise.all(this.#background);
    const last = this.client;
    this.client = undefined;
    await last?.close().catch(() => last.destroy());
  }
}

/** A plain object, so that a test may wrap it (`Object.create`) and replace one command. */
function connectionOf(link: Link): RedisConnection {
  const command = <T>(send: (client: Client) => Promise<T>) =>
    link.command(send);
  return {
    get isReady() {
      return link.isReady;
    },
    get session() {
      return link.session;
    },
    onReady: (listener) => link.readyListeners.push(listener),
    onLost: (listener) => link.lostListeners.push(listener),
    whenReady: () => link.whenReady(),
    run: (script, keys, args) =>
      command((c) =>
        (c as unknown as Record<
          ScriptName,
          (keys: string[], args: string[]) => Promise<unknown>
        >)[script](keys, args)
      ),
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
    close: () => link.close(),
  };
}

export async function connect(
  options: ConnectionOptions,
  role: string,
): Promise<RedisConnection> {
  const link = new Link(role, options.report);
  const sentinel = parseSentinelUrl(options.url);
  if (sentinel === undefined) await connectDirect(link, options);
  else await new MasterFollower(link, options, sentinel).start();
  return connectionOf(link);
}

/** node-redis reconnects by itself, resubscribing before it reports ready. */
async function connectDirect(
  link: Link,
  options: ConnectionOptions,
): Promise<void> {
  let started = false;
  const client = newClient({
    url: options.url,
    socket: {
      connectTimeout: options.connectTimeoutMs,
      // Start-up fails fast; afterwards retry forever, backing off up to a second.
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
    throw unreachable("connect to Redis", options.url, error);
  }
  started = true;
  link.client = client;
  link.up("connection restored");
}

/** The link is on a watched master, or relocating to the next: `lose` and `adopt` move it. */
class MasterFollower {
  #relocating = false;

  constructor(
    readonly link: Link,
    readonly options: ConnectionOptions,
    readonly address: SentinelAddress,
  ) {
    link.demoted = (client) => this.lose(client, "the master became a replica");
  }

  lose(client: Client, why: string): void {
    if (this.link.client !== client) return;
    this.link.client = undefined;
    client.destroy();
    this.link.down(`${why}; asking the sentinels for the master`);
    if (!this.#relocating) this.link.track(this.relocate());
  }

  adopt({ client, master }: { client: Client; master: HostPort }): void {
    const at = `${master.host}:${master.port}`;
    client.on(
      "error",
      (error: Error) =>
        this.lose(
          client,
          `connection to the master ${at} lost: ${error.message}`,
        ),
    );
    this.link.client = client;
    this.link.up(`connected to the master ${at}, found through Sentinel`);
    this.link.track(this.watch(client, master));
  }

  /** Once no sentinel names it (any, not most: docs/redis.md, "Finding the master"). */
  async watch(client: Client, master: HostPort): Promise<void> {
    const link = this.link;
    while (link.client === client && !link.closed) {
      await link.pause(MASTER_CHECK_MS);
      if (link.client !== client) return;
      // No answer is no news ([]); an answer names at least one master.
      const named = await locateMasters(this.address).catch(() => []);
      const [first] = named;
      if (
        first !== undefined && link.client === client &&
        !named.some((n) => n.host === master.host && n.port === master.port)
      ) {
        this.lose(
          client,
          `the sentinels now name ${first.host}:${first.port} the master`,
        );
      }
    }
  }

  /** Like node-redis on one server, rounds go on until a master answers or the link closes. */
  relocate(): Promise<void> {
    this.#relocating = true;
    return this.#find().finally(() => this.#relocating = false);
  }

  /** Start-up must fail fast. */
  start(): Promise<void> {
    return this.#find(performance.now() + this.options.connectTimeoutMs);
  }

  /** Tries the named addresses in turn; throws, saying why, when none is the master yet. */
  async #open(): Promise<{ client: Client; master: HostPort }> {
    const { link, options, address } = this;
    let failure: unknown;
    for (const master of await locateMasters(address)) {
      const client = newClient({
        socket: {
          host: master.host,
          port: master.port,
          connectTimeout: options.connectTimeoutMs,
          // The master may have moved: ask the sentinels before trying the same address.
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
        return { client, master };
      } catch (error) {
        client.destroy();
        failure = error;
      } finally {
        link.opening = undefined;
      }
    }
    throw failure;
  }

  /** Past `deadline`, throws saying why. */
  async #find(deadline = Infinity): Promise<void> {
    for (let round = 0; !this.link.closed; round++) {
      try {
        const opened = await this.#open();
        if (this.link.closed) opened.client.destroy();
        else this.adopt(opened);
        return;
      } catch (failure) {
        if (performance.now() >= deadline) {
          throw unreachable(
            "find the Redis master through Sentinel",
            this.options.url,
            failure,
          );
        }
        await this.link.pause(
          Math.min(50 * 2 ** Math.min(round, 8), RELOCATE_PAUSE_MS),
        );
      }
    }
  }
}
