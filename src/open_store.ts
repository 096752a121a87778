/**
 * Opens the store a `--store` value (or `LMS_STORE`) names: `memory`, or a
 * `redis://` URL.
 * @module
 */

import { MemoryStore } from "./memory_store.ts";
import { RedisStore } from "./redis_store.ts";
import type { Store, StoreLimits } from "./store.ts";

/** Options of {@linkcode openStore}. */
export interface OpenStoreOptions extends StoreLimits {
  /** `memory` or `redis://host:port[/db]`. */
  store: string;
  /** Key prefix for Redis. Default `lms:`. */
  redisPrefix?: string;
}

/** Whether `spec` names a store {@linkcode openStore} can open. */
export function isStoreSpec(spec: string): boolean {
  return spec === "memory" || /^rediss?:\/\/./.test(spec);
}

/** Opens the store; a Redis store connects first and throws if it cannot. */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const limits = { history: options.history, maxUsers: options.maxUsers };
  if (options.store === "memory") return new MemoryStore(limits);
  if (!isStoreSpec(options.store)) {
    throw new TypeError(`not a store: ${options.store}`);
  }
  return await RedisStore.connect({
    url: options.store,
    prefix: options.redisPrefix,
    ...limits,
  });
}
