/**
 * A light messaging service and a quote service: two tiny JSON-over-HTTP
 * services, each a plain `(req: Request) => Response` handler you can mount
 * in `Deno.serve`, `deno serve` or a test, with no socket needed.
 *
 * ```ts
 * import assert from "node:assert/strict";
 * import { createMessagingService } from "@lms/light-messaging";
 * // `Deno.serve(createMessagingService())` serves it on port 8000; here on
 * // a free port, shut down at the end of the block.
 * await using server = Deno.serve(
 *   { hostname: "127.0.0.1", port: 0, onListen() {} },
 *   createMessagingService(),
 * );
 * const res = await fetch(`http://127.0.0.1:${server.addr.port}/`);
 * assert.deepEqual(await res.json(), []);
 * ```
 *
 * Other entries: `@lms/light-messaging/redis` (the Redis store, which loads
 * the Redis client) and `@lms/light-messaging/client` (typed clients). The
 * program is `main.ts`: `deno task start --help`.
 * @module
 */

export { createHandler, type HandlerOptions } from "./src/program/app.ts";
export type {
  ServiceName,
  ServiceSelection,
} from "./src/services/service_names.ts";
export {
  createMessagingService,
  type MessagingStore,
} from "./src/services/messaging.ts";
export { createQuoteService, type QuoteStore } from "./src/services/quote.ts";
export type { AuthOutcome } from "./src/auth/guesses.ts";
export type { ServiceOptions } from "./src/services/service_options.ts";
export {
  type ErrorEntry,
  type ErrorLocation,
  type FixedStatus,
  JSON_CONTENT_TYPE,
} from "./src/http/response.ts";
export { HttpError } from "./src/http/http_error.ts";
export type {
  ConnectionInfo,
  FaultLogger,
  Handler,
} from "./src/http/router.ts";
export type { ResponseObserver } from "./src/http/observe_responses.ts";
export { InFlight } from "./src/http/drain.ts";
export {
  type ClientAddressOf,
  clientAddressOf,
} from "./src/http/client_address.ts";
export type { RateLimit } from "./src/store/token_buckets.ts";
export { MemoryStore } from "./src/store/memory_store.ts";
export { openStore, type OpenStoreOptions } from "./src/program/open_store.ts";
export {
  type Allowance,
  type AuthFailures,
  type AuthTry,
  type Awaitable,
  type ChangeFeed,
  type MessageLog,
  type MessagePage,
  type PresenceBoard,
  type QuoteCell,
  RateLimited,
  type Readiness,
  type RecentMessages,
  type RegisterResult,
  type Store,
  type StoredMessage,
  type StoreEvent,
  type StoreHealth,
  type StoreLimits,
  StoreUnavailableError,
  type UserDirectory,
  type UserTokens,
} from "./src/store/store.ts";
export {
  type JsonObject,
  openApiDocument,
} from "./src/openapi/openapi_document.ts";
export {
  type ClientOptions,
  type FollowOptions,
  type HistoryMessage,
  type HistoryOptions,
  type HistoryPage,
  type Message,
  type MessageFollowOptions,
  type MessageStreamEvent,
  MessagingClient,
  type PresenceChange,
  QuoteClient,
  ServiceError,
} from "./src/client/client.ts";
