// How text travels in an HTTP header. Plain JavaScript, type-checked.
// @ts-check

/**
 * `text`'s UTF-8 bytes, one character each: `fetch` refuses header
 * characters above U+00FF and sends the others as ISO-8859-1.
 *
 * @example Sending a credential
 * ```ts
 * import assert from "node:assert/strict";
 * import { createHandler } from "@lms/light-messaging";
 * import { headerValue } from "./header_value.js";
 * await using server = Deno.serve(
 *   { hostname: "127.0.0.1", port: 0, onListen() {} },
 *   createHandler(),
 * );
 * const url = `http://127.0.0.1:${server.addr.port}/users`;
 * const registered = await fetch(url, { method: "POST", body: "Иван" });
 * const { token } = await registered.json();
 * const res = await fetch(url, {
 *   headers: { "x-messaging-token": headerValue(token) },
 * });
 * assert.deepEqual(await res.json(), { users: ["Иван"] });
 * ```
 * @param {string} text
 * @returns {string}
 */
export function headerValue(text) {
  let value = "";
  for (const byte of new TextEncoder().encode(text)) {
    value += String.fromCharCode(byte);
  }
  return value;
}
