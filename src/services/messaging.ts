/**
 * The messaging service: users, their messages and who is online.
 * @module
 */

import { REFUSALS } from "../http/catalogue.ts";
import { refusalError } from "../http/http_error.ts";
import { lastValueCache } from "../http/last_value_cache.ts";
import {
  errorResponse,
  jsonResponse,
  ok,
  statusResponse,
} from "../http/response.ts";
import {
  createRouter,
  type Handler,
  mergeRoutes,
  type Routes,
} from "../http/router.ts";
import { MemoryStore } from "../store/memory_store.ts";
import type {
  AuthFailures,
  ChangeFeed,
  MessageLog,
  PresenceBoard,
  UserDirectory,
} from "../store/store.ts";
import { normalName, recheck } from "../auth/auth.ts";
import { checkMessage } from "./message_check.ts";
import { historyRoutes } from "./history.ts";
import { messageEventsRoute, NEWEST_COUNT } from "../streams/event_routes.ts";
import type { StreamHub } from "../streams/stream_hub.ts";
import {
  type ServiceOptions,
  type ServiceParts,
  servicePartsOf,
  streamHubOf,
} from "./service_options.ts";
import { mapStoreError } from "./store_errors.ts";
import { newToken } from "../auth/token.ts";
import { tokenDigest } from "../identity/token_digest.ts";
import { chatPageRoutes } from "../web/chat_page.ts";
import { nameError, nameProblem } from "./user_name.ts";

const ADDED_BODY = JSON.stringify({ status: "added" });

const unauthorized = () => statusResponse(401);

type Context = ServiceParts & { store: MessagingStore };

/**
 * What the messaging service needs of its store.
 *
 * @example Any store with these interfaces will do
 * ```ts
 * import { createMessagingService, MemoryStore, type MessagingStore } from "@lms/light-messaging";
 * const store: MessagingStore = new MemoryStore();
 * createMessagingService({ store });
 * ```
 */
export type MessagingStore =
  & UserDirectory
  & AuthFailures
  & MessageLog
  & PresenceBoard
  & ChangeFeed;

/** `/users` and `/users/online`: register, list, unregister. */
function userRoutes({ store, body, allowance, auth }: Context): Routes {
  // The store hands back the same list until it changes.
  const usersBody = lastValueCache((users: readonly string[]) =>
    JSON.stringify({ users })
  );

  const register: Handler = async (req, info) => {
    const text = await body.text(req);
    if (text === null) return refusalError(REFUSALS.nameNotUtf8).getResponse();
    const name = normalName(text);
    const problem = nameProblem(name);
    if (problem !== null) return errorResponse([nameError(problem)]);
    const token = newToken();
    const digest = tokenDigest(token);
    switch (await store.registerUser(name, digest, allowance(req, info))) {
      case "registered":
        return jsonResponse(`{"token":${JSON.stringify(`${name}-${token}`)}}`);
      case "exists":
        return refusalError(REFUSALS.userExists).getResponse();
      case "full":
        return refusalError(REFUSALS.usersFull).getResponse();
    }
  };

  const signedIn =
    (answer: () => Promise<Response>): Handler => async (req, info) =>
      (await auth.authenticate(req, info)) === null ? unauthorized() : answer();
  const listUsers = signedIn(async () =>
    jsonResponse(usersBody(await store.listUsers()))
  );
  const listOnline = signedIn(async () =>
    ok({ online: await store.onlineUsers() })
  );

  const unregister: Handler = async (req, info) => {
    const user = await auth.authenticate(req, info);
    // Checked again as the user is removed: a racing re-registration stays.
    if (
      user === null ||
      !(await store.removeUser(
        user.name,
        user.digest ?? tokenDigest(user.token),
        allowance(req, info),
      ))
    ) {
      return unauthorized();
    }
    return ok({ Goodbye: user.name });
  };

  return {
    "/users": { POST: register, GET: listUsers, DELETE: unregister },
    "/users/online": { GET: listOnline },
  };
}

/** `/`: read the newest messages, post one. */
function messageRoutes({ store, body, allowance, auth }: Context): Routes {
  const messagesBody = lastValueCache((messages: readonly string[]) =>
    `[${messages.join(",")}]`
  );

  function readMessages(): Response | Promise<Response> {
    const messages = store.newestMessages(NEWEST_COUNT);
    return messages instanceof Promise
      ? messages.then((list) => jsonResponse(messagesBody(list)))
      : jsonResponse(messagesBody(messages));
  }

  const postMessage: Handler = async (req, info) => {
    const user = await auth.authenticate(req, info);
    if (user === null) return unauthorized();
    const text = await body.text(req);
    // The body may have taken seconds: the token must still hold now.
    if ((await recheck(user, store)) === null) return unauthorized();
    const check = checkMessage(text, user.name);
    if (!check.ok) return errorResponse(check.errors);
    await store.addMessage(
      JSON.stringify(check.message),
      allowance(req, info),
    );
    return jsonResponse(ADDED_BODY);
  };

  return { "/": { GET: readMessages, POST: postMessage } };
}

/** The messaging service's route table; store failures are left to the router's `mapError`. */
export function messagingRoutes(
  options: ServiceOptions<MessagingStore> = {},
  hub: StreamHub = streamHubOf(options),
): Routes {
  const store = options.store ?? new MemoryStore();
  const context = { ...servicePartsOf(options, store), store };
  return {
    ...userRoutes(context),
    ...messageRoutes(context),
    ...historyRoutes(store),
    "/events": messageEventsRoute(store, hub, context.streams),
  };
}

/**
 * Builds the messaging service as one handler, with its chat page at `/chat`.
 *
 * @example Registering and posting without a socket
 * ```ts
 * import assert from "node:assert/strict";
 * import { createMessagingService } from "@lms/light-messaging";
 * const messaging = createMessagingService();
 * const res = await messaging(
 *   new Request("http://localhost/users", { method: "POST", body: "alice" }),
 * );
 * const { token } = await res.json();
 * const posted = await messaging(new Request("http://localhost/", {
 *   method: "POST",
 *   headers: { "x-messaging-token": token },
 *   body: JSON.stringify({ text: "Hello" }),
 * }));
 * assert.equal(posted.status, 200);
 * const read = await messaging(new Request("http://localhost/"));
 * assert.deepEqual(await read.json(), [
 *   { text: "Hello", color: "black", user: "alice" },
 * ]);
 * ```
 */
export function createMessagingService(
  options: ServiceOptions<MessagingStore> = {},
): Handler {
  return createRouter(
    mergeRoutes(messagingRoutes(options), chatPageRoutes({ quote: false })),
    { mapError: mapStoreError },
  );
}
