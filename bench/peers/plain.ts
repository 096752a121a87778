/**
 * Peer: the API on plain `Deno.serve`, routed by a `switch` on the path, as
 * one would write it without a framework. Run by `deno task bench`. Its
 * `GET /events` is the floor of `deno task bench:streams` (`fan_out.ts`).
 * @module
 */

import * as api from "./peer_api.ts";
import { fanOut } from "./fan_out.ts";

const reply = ({ status, body }: api.Answer, headers: HeadersInit = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": api.CONTENT_TYPE, ...headers },
  });

async function read(req: Request): Promise<Uint8Array | null> {
  const body = new Uint8Array(await req.arrayBuffer());
  return body.length > api.MAX_BODY ? null : body;
}

const user = (req: Request) =>
  api.authenticate(req.headers.get("x-messaging-token"));

const followers = fanOut();
let lastId = 0;

async function handle(req: Request): Promise<Response> {
  const path = new URL(req.url).pathname;
  const method = req.method === "HEAD" ? "GET" : req.method;
  switch (`${method} ${path}`) {
    case "GET /":
      return reply(api.readMessages());
    case "POST /": {
      const who = user(req);
      if (who === null) return reply(api.UNAUTHORIZED);
      const body = await read(req);
      const answer = body ? api.postMessage(who, body) : api.TOO_LARGE;
      if (answer.status === 200) {
        followers.announce(++lastId, JSON.stringify(api.newestMessage()));
      }
      return reply(answer);
    }
    case "POST /users": {
      const body = await read(req);
      return reply(body ? api.register(body) : api.TOO_LARGE);
    }
    case "GET /events":
      return followers.follow(req);
    case "GET /users":
      return reply(api.listUsers(user(req)));
    case "DELETE /users":
      return reply(api.unregister(user(req)));
    case "GET /quote":
      return reply(api.readQuote());
    case "POST /quote": {
      const body = await read(req);
      return reply(body ? api.replaceQuote(body) : api.TOO_LARGE);
    }
  }
  const allow = Object.hasOwn(api.ALLOW, path) ? api.ALLOW[path] : undefined;
  return allow === undefined
    ? reply(api.NOT_FOUND)
    : reply(api.NOT_ALLOWED, { allow });
}

Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: api.banner("plain") },
  handle,
);
