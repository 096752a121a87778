/**
 * Opens the store `--store` names; the Redis client (and Deno's Node layer) loads only for Redis.
 * @module
 */

import { MemoryStore } from "../store/memory_store.ts";
import { isRedisUrl } from "../store/redis/store_url.ts";
import type { Store, StoreLimits } from "../store/store.ts";

/** The `redis` client reads these once connected: without `--allow-env` for them the connection fails. */
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
  /** `memory`, `redis://host:port[/db]` or `redis+sentinel://host:port[,...]/master-name[/db]`. */
  store: string;
  /** Key prefix for Redis. Default `lms:`. */
  redisPrefix?: string;
  /** Replicas that must hold a write before it is answered (Redis's `WAIT`). Default 0. */
  redisWaitReplicas?: number;
  /** Told when the Redis connection is lost or restored. Default: a line on standard error. */
  onStatus?: (message: string, level: "error" | "info") => void;
  /** Paces presence across Redis processes. Default 15,000 ms. */
  heartbeatMs?: number;
}

export function isStoreSpec(spec: string): boolean {
  return spec === "memory" || isRedisUrl(spec);
}

/**
 * A Redis store connects first and throws if it cannot.
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
