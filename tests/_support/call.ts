/** Shared test helpers: requests without a socket, and the store backends to run the contract against. */

import { headerValue } from "../../src/client/header_value.js";
import { MemoryStore } from "../../src/store/memory_store.ts";
import { RedisStore } from "../../src/store/redis/redis_store.ts";
import type { RedisConnection } from "../../src/store/redis/redis_connection.ts";
import type { ConnectionInfo, Handler } from "../../src/http/router.ts";
import type { Store, StoreLimits } from "../../src/store/store.ts";
import {
  type RedisServer,
  redisServerPath,
  startRedis,
} from "./redis_server.ts";

/** The exact content type the contract requires on every response. */
export const CONTENT_TYPE = "application/json; charset=UTF-8";

/** What a test reads off an answer. */
export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  // deno-lint-ignore no-explicit-any
  json: any;
}

/** Options of {@linkcode call}. */
export interface CallOptions {
  body?: BodyInit | null;
  token?: string;
  headers?: Record<string, string>;
  /** The address the request comes from, as `Deno.serve` would tell the handler. */
  client?: string;
}

/** What `Deno.serve` tells a handler of a connection from `hostname`. */
export function connectionFrom(hostname: string): ConnectionInfo {
  return { remoteAddr: { transport: "tcp", hostname, port: 40000 } };
}

/** A header value carrying `text` as UTF-8 bytes, one character per byte, as the wire does. */
export const utf8Header: (text: string) => string = headerValue;

/** Calls `handler` with a request built from the arguments, and reads the whole answer. */
export async function call(
  handler: Handler,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Answer> {
  const headers = new Headers(options.headers);
  if (options.token !== undefined) {
    headers.set("x-messaging-token", utf8Header(options.token));
  }
  const res = await handler(
    new Request(`http://service.test${path}`, {
      method,
      headers,
      body: options.body,
    }),
    options.client === undefined ? undefined : connectionFrom(options.client),
  );
  const text = await res.text();
  let json;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A body of `size` bytes that arrives in chunks, with no declared length. */
export function chunkedBody(
  size: number,
  chunk = 16_384,
): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= size) return controller.close();
      const n = Math.min(chunk, size - sent);
      controller.enqueue(new Uint8Array(n).fill(0x61));
      sent += n;
    },
  });
}

/** One store backend the contract suite runs against. */
export interface StoreBackend {
  name: string;
  /** Why this backend cannot run here, or `undefined` when it can. */
  unavailable?: string;
  create(limits?: StoreLimits): Promise<Store>;
}

let sharedRedis: Promise<RedisServer> | undefined;

/** One Redis server for the whole run, started on first use. */
export function sharedRedisServer(): Promise<RedisServer> {
  return sharedRedis ??= startRedis();
}

/** A connection of the store's own kind to the shared server, for tests that run its scripts and commands directly. */
export async function sharedRedisConnection(): Promise<RedisConnection> {
  const server = await sharedRedisServer();
  // Loaded here, as the store loads it: tests of the memory store never do.
  const { connect } = await import("../../src/store/redis/connection.ts");
  return await connect({
    url: server.url,
    connectTimeoutMs: 2000,
    report: () => {},
  }, "test");
}

const redisMissing = redisServerPath() === undefined
  ? "redis-server is not on PATH (apt-get install redis-server)"
  : undefined;
if (redisMissing) {
  console.warn(`\n!!! SKIPPING every Redis store test: ${redisMissing} !!!\n`);
}

/** Every backend; each contract test runs once per entry. */
export const backends: StoreBackend[] = [
  {
    name: "memory",
    create: (limits) => Promise.resolve(new MemoryStore(limits)),
  },
  {
    name: "redis",
    unavailable: redisMissing,
    async create(limits) {
      const server = await sharedRedisServer();
      // A prefix of its own per test keeps tests apart on one server.
      return await RedisStore.connect({
        url: server.url,
        prefix: `test:${crypto.randomUUID()}:`,
        ...limits,
      });
    },
  },
];

/** Registers one test per backend, giving each a fresh store and closing it after. */
export function storeTest(
  name: string,
  fn: (store: Store, backend: StoreBackend) => Promise<void>,
  limits?: StoreLimits,
): void {
  for (const backend of backends) {
    Deno.test({
      name: `[${backend.name}] ${name}`,
      ignore: backend.unavailable !== undefined,
      async fn() {
        const store = await backend.create(limits);
        try {
          await fn(store, backend);
        } finally {
          await store.close();
        }
      },
    });
  }
}
