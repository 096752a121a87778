// How text travels in an HTTP header. Plain JavaScript, type-checked.
// @ts-check

/**
 * `text`'s UTF-8 bytes, one character each: `fetch` refuses header
 * characters above U+00FF and sends the others as ISO-8859-1.
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
