/**
 * The two calls most process tests start with, made over HTTP to a running
 * program at `url` (ending in `/`), each asserting it succeeded.
 */
import assert from "node:assert/strict";
import { utf8Header } from "./call.ts";

/** Registers `name` and answers its token. */
export async function register(url: string, name: string): Promise<string> {
  const res = await fetch(`${url}users`, { method: "POST", body: name });
  assert.equal(res.status, 200);
  return (await res.json()).token;
}

/** Posts a black message `text` as the user `token` names. */
export async function postMessage(
  url: string,
  token: string,
  text: string,
): Promise<void> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "x-messaging-token": utf8Header(token) },
    body: JSON.stringify({ text }),
  });
  const answer = await res.text();
  assert.equal(res.status, 200, answer);
}
