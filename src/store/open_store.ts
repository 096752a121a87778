/**
 * Opens the store a `--store` value (or `LMS_STORE`) names: `memory`, or a
 * `redis://` URL. The Redis client (and the Node compatibility layer it
 * needs) is loaded only when a Redis store is opened, so a process on the
 * memory store never pays for it.
 * @module
 */

import { MemoryStore } from "./memory_store.ts";
import {
  type Store,
  type StoreLimits,
  StoreUnavailableError,
} from "./store.ts";

/**
 * The Redis store's module. A specifier Deno cannot follow statically keeps
 * it, and `npm:redis`, out of the program's module graph: a process on the
 * memory store neither downloads nor loads the client (measured: 45 MB idle
 * instead of 68). The price is that loading it needs read access to its
 * folder, which the tasks grant (`--allow-read=src/store/redis`), and that
 * `deno compile` must be told to include it.
 */
const REDIS_MODULE = new URL("./redis/redis_store.ts", import.meta.url);

/**
 * The variables the `redis` npm client reads as it loads. A program that
 * may open a Redis store must be allowed to read them (`--allow-env`), or
 * Deno refuses the read and the import fails.
 */
export const REDIS_CLIENT_VARIABLES: readonly string[] = [
  "REDIS_DEBUG_MAINTENANCE",
  "REDIS_EMIT_DIAGNOSTICS",
];

/** What this module uses of the Redis store's module. */
interface RedisModule {
  RedisStore: {
    connect(
      options: StoreLimits & {
        url: string;
        prefix?: string;
        onStatus?: OpenStoreOptions["onStatus"];
      },
    ): Promise<Store>;
  };
}

async function loadRedis(): Promise<RedisModule> {
  try {
    return await import(REDIS_MODULE.href);
  } catch (error) {
    // Deno refuses the import with a TypeError that names the permission.
    const refused = error instanceof Deno.errors.NotCapable ||
      (error instanceof TypeError &&
        /Requires read access/.test(error.message));
    if (!refused) throw error;
    throw new StoreUnavailableError(
      `the Redis store needs read access to its module: add --allow-read=${
        decodeURIComponent(new URL(".", REDIS_MODULE).pathname)
      }`,
      { cause: error },
    );
  }
}

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
  /** `memory` or `redis://host:port[/db]`. */
  store: string;
  /** Key prefix for Redis. Default `lms:`. */
  redisPrefix?: string;
  /** Told when the Redis connection is lost (`error`) or restored (`info`). Default: a line on standard error. */
  onStatus?: (message: string, level: "error" | "info") => void;
}

/** Whether `spec` names a store {@linkcode openStore} can open. */
export function isStoreSpec(spec: string): boolean {
  return spec === "memory" || /^rediss?:\/\/./.test(spec);
}

/**
 * Opens the store; a Redis store connects first and throws if it cannot.
 *
 * @example The memory store
 * ```ts
 * import { createHandler, openStore } from "@lms/light-messaging";
 * const store = await openStore({ store: "memory", history: 200 });
 * const handler = createHandler({ store });
 * await store.close();
 * ```
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const limits = { history: options.history, maxUsers: options.maxUsers };
  if (options.store === "memory") return new MemoryStore(limits);
  if (!isStoreSpec(options.store)) {
    throw new TypeError(`not a store: ${options.store}`);
  }
  const { RedisStore } = await loadRedis();
  return await RedisStore.connect({
    url: options.store,
    prefix: options.redisPrefix,
    onStatus: options.onStatus,
    ...limits,
  });
}
