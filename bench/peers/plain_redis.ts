/**
 * Peer of `deno task bench:write-scale`: registering and posting on plain
 * `Deno.serve` over Redis, with the program's Redis client (npm `redis`),
 * as one would first write them: the token's secret looked up in a hash,
 * the message's id from `INCR`, then the message pushed, trimmed and
 * published in one `MULTI`. Several of it share a port (`reusePort`) and
 * a Redis, as the program's processes do with `--reuse-port`.
 *
 * `deno run -A bench/peers/plain_redis.ts --port=N --store=redis://HOST:PORT/DB --prefix=P`
 * @module
 */

import { parseArgs } from "node:util";
import { createClient } from "redis";
import { checkMessage } from "../../src/services/message_check.ts";
import { timingSafeEqual } from "../../src/auth/auth.ts";
import { banner, CONTENT_TYPE, UNAUTHORIZED } from "./peer_api.ts";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "0" },
    hostname: { type: "string", default: "127.0.0.1" },
    store: { type: "string" },
    prefix: { type: "string", default: "plain:" },
  },
});
const redis = await createClient({ url: values.store }).connect();
const USERS = `${values.prefix}users`;
const IDS = `${values.prefix}id`;
const MESSAGES = `${values.prefix}messages`;
const CHANNEL = `${values.prefix}changes`;

const reply = (status: number, body: unknown) =>
  Response.json(body, {
    status,
    headers: { "content-type": CONTENT_TYPE },
  });

async function user(req: Request): Promise<string | null> {
  const header = req.headers.get("x-messaging-token") ?? "";
  const dash = header.indexOf("-");
  if (dash === -1) return null;
  const name = header.slice(0, dash);
  const secret = await redis.hGet(USERS, name);
  return secret && timingSafeEqual(secret, header.slice(dash + 1))
    ? name
    : null;
}

async function handle(req: Request): Promise<Response> {
  const path = new URL(req.url).pathname;
  if (req.method === "POST" && path === "/users") {
    const name = await req.text();
    const secret = Array.from(
      crypto.getRandomValues(new Uint8Array(16)),
      (b) => b.toString(16).padStart(2, "0"),
    ).join("");
    const added = await redis.hSetNX(USERS, name, secret);
    return added
      ? reply(200, { token: `${name}-${secret}` })
      : reply(400, { status: "error" });
  }
  if (req.method === "POST" && path === "/") {
    const name = await user(req);
    if (name === null) return reply(401, UNAUTHORIZED.body);
    const check = checkMessage(await req.text(), name);
    if (!check.ok) return reply(400, { status: "error", errors: check.errors });
    const id = await redis.incr(IDS);
    const json = JSON.stringify({ id, ...check.message });
    await redis.multi().rPush(MESSAGES, json).lTrim(MESSAGES, -100, -1)
      .publish(CHANNEL, json).exec();
    return reply(200, { status: "added" });
  }
  return reply(404, { status: 404, message: "Not Found" });
}

Deno.serve({
  hostname: values.hostname,
  port: Number(values.port),
  reusePort: true,
  onListen: banner("plain on Redis"),
}, handle);
