/**
 * Past its failures' allowance a client is 429 on every authenticated route: a right guess tells nothing.
 * @module
 */

import type { ClientAddressOf } from "../http/client_address.ts";
import { REFUSALS } from "../http/catalogue.ts";
import { waitRefusal } from "../http/http_error.ts";
import type { ConnectionInfo } from "../http/router.ts";
import {
  type AuthFailures,
  type AuthTry,
  type Awaitable,
  FREE_TRY,
  type UserTokens,
} from "../store/store.ts";
import type { RateLimit } from "../store/token_buckets.ts";
import {
  type Credential,
  parseCredential,
  recheck,
  TOKEN_HEADER,
} from "./auth.ts";
import { tokenDigest } from "../identity/token_digest.ts";

/** The contract's default: 100 failures at once, then one more every 0.1 s. */
export const AUTH_FAILURES_DEFAULT: RateLimit = { burst: 100, periodMs: 100 };

/**
 * A credential that did not authenticate, or a request refused for guessing.
 *
 * @example Counting failures
 * ```ts
 * import assert from "node:assert/strict";
 * import { type AuthOutcome, createMessagingService } from "@lms/light-messaging";
 * const seen: AuthOutcome[] = [];
 * const messaging = createMessagingService({ onAuthOutcome: (o) => seen.push(o) });
 * await messaging(new Request("http://localhost/users", {
 *   headers: { "x-messaging-token": "nobody-00" },
 * }), { remoteAddr: { transport: "tcp", hostname: "192.0.2.1", port: 1 } } as Deno.ServeHandlerInfo<Deno.NetAddr>);
 * assert.deepEqual(seen, ["failed"]);
 * ```
 */
export type AuthOutcome = "failed" | "refused";

export interface AuthenticatorOptions {
  store: UserTokens & AuthFailures;
  /** The failures each client may make; `undefined` counts them for metrics only. */
  rate: RateLimit | undefined;
  clientOf: ClientAddressOf;
  /** Told of each failed authentication and each refusal. */
  report?: (outcome: AuthOutcome) => void;
}

export interface Authenticator {
  /** The credential of `req` when it authenticates, else `null`; throws 429 while the client must wait. */
  authenticate(
    req: Request,
    info?: ConnectionInfo,
  ): Awaitable<Credential | null>;
  /** The same for a credential that came another way (a WebSocket's token frame) from `client`. */
  check(
    credential: Credential | null,
    client: string,
  ): Awaitable<Credential | null>;
}

/**
 * @example The 101st wrong token is refused, and so is the right one
 * ```ts
 * import assert from "node:assert/strict";
 * import { MemoryStore } from "../store/memory_store.ts";
 * import { createAuthenticator } from "./guesses.ts";
 * const store = new MemoryStore();
 * await store.registerUser("ann", "digest");
 * const auth = createAuthenticator({
 *   store,
 *   rate: { burst: 1, periodMs: 60_000 },
 *   clientOf: () => "192.0.2.1",
 * });
 * const guess = new Request("http://localhost/users", {
 *   headers: { "x-messaging-token": "ann-0000" },
 * });
 * assert.equal(await auth.authenticate(guess), null);
 * await assert.rejects(
 *   async () => await auth.authenticate(guess),
 *   (e: Error) => "status" in e && e.status === 429,
 * );
 * ```
 */
export function createAuthenticator(
  options: AuthenticatorOptions,
): Authenticator {
  const { store, rate, clientOf, report } = options;

  /**
   * A wrong credential is 401 only if its failure was counted; one that found the
   * client out of tries (taken meanwhile, here or elsewhere) is refused like a later one.
   */
  function wrong(waitMs: number): null {
    if (waitMs > 0) {
      report?.("refused");
      throw waitRefusal(REFUSALS.tooManyAuthFailures, rate!, waitMs);
    }
    report?.("failed");
    return null;
  }

  // Not async: with a store that answers at once (memory, or Redis's local
  // copy of the tokens) the hot path makes no promise.
  function check(
    credential: Credential | null,
    client: string,
  ): Awaitable<Credential | null> {
    if (rate === undefined) return judged(FREE_TRY, credential, client);
    if (credential !== null) {
      credential.digest ??= tokenDigest(credential.token);
    }
    const tried = store.authWait(
      client,
      rate,
      credential as { name: string; digest: string } | null,
    );
    return tried instanceof Promise
      ? tried.then((t) => judged(t, credential, client))
      : judged(tried, credential, client);
  }

  function judged(
    tried: AuthTry,
    credential: Credential | null,
    client: string,
  ): Awaitable<Credential | null> {
    if (tried.waitMs > 0) return wrong(tried.waitMs);
    if (tried.verdict !== undefined) {
      // The store judged it, and counted it when wrong.
      if (!tried.verdict || credential === null) return wrong(0);
      store.touchUser(credential.name);
      return credential;
    }
    const user = credential && recheck(credential, store);
    return user instanceof Promise
      ? user.then((found) => counted(found, client))
      : counted(user, client);
  }

  function counted(
    user: Credential | null,
    client: string,
  ): Awaitable<Credential | null> {
    if (user !== null) return user;
    if (rate === undefined) return wrong(0);
    const counting = store.countAuthFailure(client, rate);
    return counting instanceof Promise ? counting.then(wrong) : wrong(counting);
  }

  return {
    authenticate(req, info) {
      // No credential is no guess: it is answered 401 and not counted.
      const header = req.headers.get(TOKEN_HEADER);
      if (header === null) return null;
      return check(parseCredential(header), clientOf(req, info));
    },
    check,
  };
}
