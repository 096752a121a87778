// How text travels in an HTTP header, shared by the client library and the
// web page: the page inlines this file (see src/web/chat_page.ts), so it
// imports nothing and stays plain JavaScript, type-checked with the page.
// @ts-check

/**
 * `text` as an HTTP header value: its UTF-8 bytes, one character each.
 * `fetch` sends each character of a header value as one byte and refuses
 * any above U+00FF, so `Иван` sent as text fails and `José` arrives as
 * ISO-8859-1; sent through this it arrives as UTF-8, whatever the name.
 *
 * @example Sending a credential
 * ```ts
 * import { headerValue } from "./header_value.js";
 * const credential = "Иван-0123456789abcdef0123456789abcdef01234567";
 * await fetch("http://localhost:8000/users", {
 *   headers: { "x-messaging-token": headerValue(credential) },
 * });
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
