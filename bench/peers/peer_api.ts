/**
 * The API as someone would first write it, shared by the two peers the
 * benchmark compares against (`plain.ts` on `Deno.serve`, `hono.ts` on
 * Hono): state in a `Map` and an array, every answer built with
 * `JSON.stringify` per request. The rules themselves are the project's own
 * pure checks, so the peers differ from the program only in plumbing.
 * @module
 */

import { checkMessage } from "../../src/services/message_check.ts";
import { nameProblem } from "../../src/services/user_name.ts";
import { quoteErrors } from "../../src/services/quote_check.ts";
import { timingSafeEqual } from "../../src/auth/auth.ts";

/** An answer: the status and the value to send as JSON. */
export interface Answer {
  status: number;
  body: unknown;
}

/** The one content type of every answer. */
export const CONTENT_TYPE = "application/json; charset=UTF-8";
/** The contract's body limit, checked after reading, as the obvious code does. */
export const MAX_BODY = 65536;

const fixed = (status: number, message: string): Answer => ({
  status,
  body: { status, message },
});
/** 401. */
export const UNAUTHORIZED = fixed(401, "Unauthorized");
/** 404. */
export const NOT_FOUND = fixed(404, "Not Found");
/** The methods of each path, for 405's `Allow`. */
export const ALLOW: Record<string, string> = {
  "/": "GET, HEAD, POST",
  "/users": "DELETE, GET, HEAD, POST",
  "/quote": "GET, HEAD, POST",
};
/** 405; the caller adds `Allow`. */
export const NOT_ALLOWED = fixed(405, "Method Not Allowed");
/** 413. */
export const TOO_LARGE: Answer = {
  status: 413,
  body: {
    status: "error",
    errors: [{
      location: "body",
      name: "body",
      description: `Body larger than ${MAX_BODY} bytes`,
    }],
  },
};

const invalid = (errors: unknown[]): Answer => ({
  status: 400,
  body: { status: "error", errors },
});

const users = new Map<string, string>();
const messages: Record<string, unknown>[] = [];
let quote = "Not set, yet !";
const utf8 = new TextDecoder("utf-8", { fatal: true });

function text(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** The user a `X-Messaging-Token` value names, or `null`. */
export function authenticate(header: string | null): string | null {
  const dash = header?.indexOf("-") ?? -1;
  if (header === null || dash === -1) return null;
  const name = header.slice(0, dash);
  const token = users.get(name);
  return token !== undefined && timingSafeEqual(token, header.slice(dash + 1))
    ? name
    : null;
}

/** `POST /users`. */
export function register(body: Uint8Array): Answer {
  const name = text(body);
  const problem = name === null ? "Name is not valid UTF-8" : nameProblem(name);
  if (problem !== null || name === null) {
    return invalid([{ location: "body", name: "name", description: problem }]);
  }
  if (users.has(name)) {
    return invalid([{
      location: "url",
      name: "name",
      description: "This user exists!",
    }]);
  }
  const token = crypto.getRandomValues(new Uint8Array(20)).toHex();
  users.set(name, token);
  return { status: 200, body: { token: `${name}-${token}` } };
}

/** `GET /users`. */
export function listUsers(user: string | null): Answer {
  return user === null
    ? UNAUTHORIZED
    : { status: 200, body: { users: [...users.keys()] } };
}

/** `DELETE /users`. */
export function unregister(user: string | null): Answer {
  if (user === null) return UNAUTHORIZED;
  users.delete(user);
  return { status: 200, body: { Goodbye: user } };
}

/** `GET /`. */
export function readMessages(): Answer {
  return { status: 200, body: messages.slice(-5).reverse() };
}

/** `POST /`. */
export function postMessage(user: string | null, body: Uint8Array): Answer {
  if (user === null) return UNAUTHORIZED;
  const check = checkMessage(text(body), user);
  if (!check.ok) return invalid(check.errors);
  messages.push(check.message);
  if (messages.length > 100) messages.shift();
  return { status: 200, body: { status: "added" } };
}

/** The message the last `POST /` answered 200 added, for the event streams of `plain.ts`. */
export function newestMessage(): Record<string, unknown> | undefined {
  return messages.at(-1);
}

/** `GET /quote`. */
export function readQuote(): Answer {
  return { status: 200, body: quote };
}

/** `POST /quote`. */
export function replaceQuote(body: Uint8Array): Answer {
  const value = text(body);
  if (value === null) {
    return invalid([{
      location: "body",
      name: "quote",
      description: "Quote is not valid UTF-8",
    }]);
  }
  const errors = quoteErrors(value);
  if (errors.length > 0) return invalid(errors);
  quote = value;
  return { status: 200, body: null };
}

/** Prints the banner the benchmark waits for. */
export function banner(name: string) {
  return ({ hostname, port }: Deno.NetAddr) =>
    console.log(`Listening on http://${hostname}:${port}/ (services: ${name})`);
}
