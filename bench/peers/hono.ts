/**
 * Peer: the API on Hono, written as its guide shows: one `app.get`/`app.post`
 * per call. Hono's `c.json` says `application/json` without the charset the
 * contract asks for, so answers set the header themselves. Run by
 * `deno task bench`.
 * @module
 */

import { type Context, Hono } from "hono";
import * as api from "./peer_api.ts";

const app = new Hono();

const reply = (c: Context, { status, body }: api.Answer) =>
  c.body(JSON.stringify(body), status as 200, {
    "content-type": api.CONTENT_TYPE,
  });

async function read(c: Context): Promise<Uint8Array | null> {
  const body = new Uint8Array(await c.req.arrayBuffer());
  return body.length > api.MAX_BODY ? null : body;
}

const user = (c: Context) =>
  api.authenticate(c.req.header("x-messaging-token") ?? null);

app.get("/", (c) => reply(c, api.readMessages()));
app.post("/", async (c) => {
  const who = user(c);
  if (who === null) return reply(c, api.UNAUTHORIZED);
  const body = await read(c);
  return reply(c, body ? api.postMessage(who, body) : api.TOO_LARGE);
});
app.post("/users", async (c) => {
  const body = await read(c);
  return reply(c, body ? api.register(body) : api.TOO_LARGE);
});
app.get("/users", (c) => reply(c, api.listUsers(user(c))));
app.delete("/users", (c) => reply(c, api.unregister(user(c))));
app.get("/quote", (c) => reply(c, api.readQuote()));
app.post("/quote", async (c) => {
  const body = await read(c);
  return reply(c, body ? api.replaceQuote(body) : api.TOO_LARGE);
});
for (const [path, allow] of Object.entries(api.ALLOW)) {
  app.all(path, (c) => {
    c.header("allow", allow);
    return reply(c, api.NOT_ALLOWED);
  });
}
app.notFound((c) => reply(c, api.NOT_FOUND));

Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: api.banner("hono") },
  app.fetch,
);
