/**
 * Opens the store a `--store` value (or `LMS_STORE`) names: `memory`, a
 * `redis://` URL, or a `redis+sentinel://` URL. The Redis client (and the Node compatibility layer it
 * needs) is loaded only when a Redis store is opened, so a process on the
 * memory store never pays for it.
 * @module
 */

import { MemoryStore } from "../store/memory_store.ts";
import { isRedisUrl } from "../store/redis/store_url.ts";
import type { Store, StoreLimits } from "../store/store.ts";

/**
 * The variables the `redis` npm client reads once connected. A program
 * that may open a Redis store must be allowed to read them (`--allow-env`),
 * or Deno refuses the read and the connection fails.
 */
export const REDIS_CLIENT_VARIABLES: readonly string[] = [
  "REDIS_DEBUG_MAINTENANCE",
  "REDIS_EMIT_DIAGNOSTICS",
];

/**
 * Options of {@linkcode openStore}.
 *
 * @example Options for a Redis store
 * ```ts
 * import type { OpenStoreOptions } from "@lms/light-messaging";
 * const options: OpenStoreOptions = { store: "redis://127.0.0.1:6379/0", redisPrefix: "chat:" };
 * ```
 */
export interface OpenStoreOptions extends StoreLimits {
  /** `memory`, `redis://host:port[/db]`, or `redis+sentinel://host:port[,host:port...]/master-name[/db]`. */
  store: string;
  /** Key prefix for Redis. Default `lms:`. */
  redisPrefix?: string;
  /** Replicas that must hold a write before it is answered (Redis's `WAIT`). Default 0. */
  redisWaitReplicas?: number;
  /** Told when the Redis connection is lost (`error`) or restored (`info`). Default: a line on standard error. */
  onStatus?: (message: string, level: "error" | "info") => void;
  /** The event streams' heartbeat, which paces presence across Redis processes. Default 15,000 ms. */
  heartbeatMs?: number;
}

/** Whether `spec` names a store {@linkcode openStore} can open. */
export function isStoreSpec(spec: string): boolean {
  return spec === "memory" || isRedisUrl(spec);
}

/**
 * Opens the store; a Redis store connects first and throws if it cannot.
 *
 * @example The memory store
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler, openStore } from "@lms/light-messaging";
 * const store = await openStore({ store: "memory", history: 200 });
 * const handler = createHandler({ store });
 * const res = await handler(new Request("http://localhost/"));
 * assert.deepEqual(await res.json(), []);
 * await store.close();
 * ```
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const limits = {
    history: options.history,
    maxUsers: options.maxUsers,
    forgetUsersAfter: options.forgetUsersAfter,
  };
  if (options.store === "memory") return new MemoryStore(limits);
  if (!isStoreSpec(options.store)) {
    throw new TypeError(`not a store: ${options.store}`);
  }
  // Dynamic, so that a process on the memory store never loads the client.
  const { RedisStore } = await import("../store/redis/redis_store.ts");
  return await RedisStore.connect({
    url: options.store,
    prefix: options.redisPrefix,
    waitReplicas: options.redisWaitReplicas,
    onStatus: options.onStatus,
    heartbeatMs: options.heartbeatMs,
    ...limits,
  });
}
