/**
 * The benchmark's peers answer as the program does: the same calls, in the
 * same order, get the same statuses, content types, `Allow` headers and
 * bodies (tokens aside), so comparing their speed compares like with like.
 */

import assert from "node:assert/strict";
import { type RunningServer, startServer } from "../_support/program.ts";

const PEERS = ["plain", "hono"];

interface Call {
  method: string;
  path: string;
  body?: string;
  /** Send the token of the first registration. */
  auth?: boolean;
}

const CALLS: Call[] = [
  { method: "GET", path: "/" },
  { method: "GET", path: "/quote" },
  { method: "POST", path: "/users", body: "alice" },
  { method: "POST", path: "/users", body: "alice" },
  { method: "POST", path: "/users", body: "bad-name" },
  { method: "POST", path: "/users", body: "bob" },
  { method: "GET", path: "/users", auth: true },
  { method: "GET", path: "/users" },
  { method: "POST", path: "/", auth: true, body: '{"text":"hi"}' },
  {
    method: "POST",
    path: "/",
    auth: true,
    body: '{"text":"yo","color":"red"}',
  },
  { method: "POST", path: "/", auth: true, body: '{"text":1}' },
  { method: "POST", path: "/", auth: true, body: "{" },
  {
    method: "POST",
    path: "/",
    auth: true,
    body: '{"text":"x","color":"blue"}',
  },
  { method: "POST", path: "/", body: '{"text":"hi"}' },
  { method: "GET", path: "/?x=1" },
  { method: "POST", path: "/quote", body: "lower case" },
  { method: "POST", path: "/quote", body: "Fine words." },
  { method: "GET", path: "/quote" },
  { method: "PUT", path: "/quote" },
  { method: "PATCH", path: "/users" },
  { method: "DELETE", path: "/" },
  { method: "GET", path: "/nowhere" },
  { method: "HEAD", path: "/quote" },
  { method: "DELETE", path: "/users", auth: true },
  { method: "GET", path: "/users", auth: true },
];

async function transcript(server: RunningServer): Promise<string[]> {
  let token = "";
  const lines: string[] = [];
  for (const call of CALLS) {
    const res = await fetch(new URL(call.path, server.url), {
      method: call.method,
      body: call.body,
      headers: call.auth ? { "x-messaging-token": token } : {},
    });
    const text = await res.text();
    const found = text.match(/"token":"([^"]+)"/)?.[1];
    if (found && token === "") token = found;
    lines.push(
      `${call.method} ${call.path} -> ${res.status} ${
        res.headers.get("content-type")
      } allow=${res.headers.get("allow")} ${
        text.replace(/-[0-9a-f]{40}"/g, '-TOKEN"')
      }`,
    );
  }
  return lines;
}

for (const peer of PEERS) {
  Deno.test(`bench/peers/${peer}.ts answers every call as the program does`, async () => {
    const program = await startServer(["--quiet"]);
    const other = await startServer([], {}, {
      entry: new URL(`../../bench/peers/${peer}.ts`, import.meta.url).pathname,
    });
    try {
      const expected = await transcript(program);
      assert.deepEqual(await transcript(other), expected);
      // Not a vacuous match: the transcript holds each kind of answer.
      for (const status of [200, 400, 401, 404, 405]) {
        assert.ok(expected.some((line) => line.includes(`-> ${status} `)));
      }
    } finally {
      await program.stop();
      await other.stop();
    }
  });
}
