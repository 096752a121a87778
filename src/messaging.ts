/**
 * The messaging service: users register a name for a token (`/users`), and
 * with it list users, unregister and post messages (`/`); anyone reads the
 * newest five messages.
 * @module
 */

import { authenticate } from "./auth.ts";
import {
  encodeJson,
  type ErrorEntry,
  errorResponse,
  jsonResponse,
  lastValueCache,
  ok,
  readText,
  statusResponse,
} from "./http.ts";
import { MemoryStore } from "./memory_store.ts";
import { resolveMaxBodyBytes, type ServiceOptions } from "./options.ts";
import { createRouter, type Handler, type Routes } from "./router.ts";

/** How many messages `GET /` answers with. */
export const NEWEST_COUNT = 5;

/** The longest name accepted, in Unicode code points. */
export const MAX_NAME_LENGTH = 64;

const ADDED_BODY = encodeJson({ status: "added" });
const encoder = new TextEncoder();

// U+0000–U+001F and U+007F cannot travel in an HTTP header value.
// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const EDGE_SPACE = /^\s|\s$/;

function nameError(description: string): ErrorEntry {
  return { location: "body", name: "name", description };
}

/**
 * Why `name` cannot be registered, or `null` when it can. Every refused name
 * is one that could not come back intact in the `X-Messaging-Token` header.
 */
export function nameProblem(name: string): string | null {
  if (name.length === 0) return "Name must not be empty";
  if (name.includes("-")) {
    return "Name must not contain '-': the token header is split at its first '-'";
  }
  if (CONTROL.test(name)) return "Name must not contain control characters";
  if (EDGE_SPACE.test(name)) {
    return "Name must not start or end with white space";
  }
  let codePoints = 0;
  for (const _ of name) {
    if (++codePoints > MAX_NAME_LENGTH) {
      return `Name must be at most ${MAX_NAME_LENGTH} characters`;
    }
  }
  return null;
}

const TOKEN_BYTES = 20;
// Random bytes are drawn from the system in batches and each byte is used
// for one token only: one call per 512 registrations instead of one each.
let randomPool = new Uint8Array(0);
let randomOffset = 0;

/** A fresh token: 20 random bytes from `crypto.getRandomValues` as 40 lowercase hex digits. */
export function newToken(): string {
  if (randomOffset + TOKEN_BYTES > randomPool.length) {
    randomPool = crypto.getRandomValues(new Uint8Array(TOKEN_BYTES * 512));
    randomOffset = 0;
  }
  const bytes = randomPool.subarray(randomOffset, randomOffset + TOKEN_BYTES);
  randomOffset += TOKEN_BYTES;
  return bytes.toHex();
}

type Check =
  | { ok: true; message: Record<string, unknown> }
  | { ok: false; errors: ErrorEntry[] };

function bodyError(name: string, description: string): Check {
  return { ok: false, errors: [{ location: "body", name, description }] };
}

/**
 * Runs the contract's message checks in order on a posted body and, when
 * they pass, returns the message to store with `color` and `user` set.
 */
export function checkMessage(body: string | null, user: string): Check {
  let parsed: unknown;
  try {
    if (body === null) throw new SyntaxError("not UTF-8");
    parsed = JSON.parse(body);
  } catch {
    return bodyError("message", "Not valid JSON");
  }
  if (
    typeof parsed !== "object" || parsed === null || Array.isArray(parsed) ||
    !Object.hasOwn(parsed, "text")
  ) {
    return bodyError("text", "Missing text");
  }
  // JSON.parse defines every key as an own data property, `__proto__`
  // included, so the posted fields are kept as posted.
  const message = parsed as Record<string, unknown>;
  if (typeof message.text !== "string") {
    return bodyError("text", "text must be a string");
  }
  if (!Object.hasOwn(message, "color")) {
    message.color = "black";
  } else if (message.color !== "red" && message.color !== "black") {
    return bodyError("color", "only red and black supported");
  }
  message.user = user;
  return { ok: true, message };
}

const unauthorized = () => statusResponse(401);

/** The messaging service's route table, for composing with other services. */
export function messagingRoutes(options: ServiceOptions = {}): Routes {
  const store = options.store ?? new MemoryStore();
  const maxBodyBytes = resolveMaxBodyBytes(options);
  const messagesBody = lastValueCache((json: string) => encoder.encode(json));
  const answerMessages = (json: string) => jsonResponse(messagesBody(json));
  // The store hands back the same list until it changes, so its JSON is
  // built once per change rather than once per request.
  const usersBody = lastValueCache((users: readonly string[]) =>
    encodeJson({ users })
  );

  async function register(req: Request): Promise<Response> {
    const name = await readText(req, maxBodyBytes);
    if (name === null) {
      return errorResponse([nameError("Name is not valid UTF-8")]);
    }
    const problem = nameProblem(name);
    if (problem !== null) return errorResponse([nameError(problem)]);
    const token = newToken();
    switch (await store.registerUser(name, token)) {
      case "registered":
        return jsonResponse(`{"token":${JSON.stringify(`${name}-${token}`)}}`);
      case "exists":
        return errorResponse([
          { location: "url", name: "name", description: "This user exists!" },
        ]);
      case "full":
        return errorResponse(
          [nameError("No more users can register: the user limit is reached")],
          503,
        );
    }
  }

  async function listUsers(req: Request): Promise<Response> {
    if ((await authenticate(req, store)) === null) return unauthorized();
    return jsonResponse(usersBody(await store.listUsers()));
  }

  async function unregister(req: Request): Promise<Response> {
    const user = await authenticate(req, store);
    // The token is checked again as the user is removed, so a request
    // racing a re-registration cannot remove the new user.
    if (user === null || !(await store.removeUser(user.name, user.token))) {
      return unauthorized();
    }
    return ok({ Goodbye: user.name });
  }

  function readMessages(): Response | Promise<Response> {
    const json = store.newestMessages(NEWEST_COUNT);
    return json instanceof Promise
      ? json.then(answerMessages)
      : answerMessages(json);
  }

  async function postMessage(req: Request): Promise<Response> {
    const user = await authenticate(req, store);
    if (user === null) return unauthorized();
    const check = checkMessage(await readText(req, maxBodyBytes), user.name);
    if (!check.ok) return errorResponse(check.errors);
    await store.addMessage(JSON.stringify(check.message));
    return jsonResponse(ADDED_BODY);
  }

  return {
    "/users": { POST: register, GET: listUsers, DELETE: unregister },
    "/": { GET: readMessages, POST: postMessage },
  };
}

/** Builds the messaging service as one handler. */
export function createMessagingService(options: ServiceOptions = {}): Handler {
  return createRouter(messagingRoutes(options));
}
