/**
 * The floor for `deno task bench:scale`: followers of `GET /events` (an
 * event stream, or a WebSocket when the request asks for the upgrade) on
 * plain `Deno.serve`, as one would write a fan-out over several processes
 * without the program. Any number of copies share a port (`reusePort`) and
 * one Redis: `POST /` takes the next id (`INCR`) and publishes the body;
 * every copy subscribes and sends each message to each of its followers in
 * a loop over a `Set`, encoded once. No users, catch-up, resume, heartbeat
 * or bound on what waits for a slow follower: what is left is what Deno,
 * Redis's pub/sub and the kernel cost. WebSockets keep Deno's default
 * `idleTimeout` (a ping after 15 s of quiet, as the program's default
 * `--heartbeat-ms`). Prints the banner `startServer` waits for.
 * @module
 */

import { parseArgs } from "node:util";
import { createClient } from "redis";
import { fanOut } from "./peers/fan_out.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    hostname: { type: "string", default: "127.0.0.1" },
    port: { type: "string", default: "0" },
    store: { type: "string", default: "redis://127.0.0.1:6379/0" },
  },
});
const CHANNEL = "floor:messages";
const followers = fanOut();

const publisher = createClient({ url: values.store });
const subscriber = publisher.duplicate();
await Promise.all([publisher.connect(), subscriber.connect()]);
// Each message is "<id> <json>": the id first, then the body as posted.
await subscriber.subscribe(CHANNEL, (message: string) => {
  const space = message.indexOf(" ");
  const id = message.slice(0, space);
  followers.announce(id, message.slice(space + 1));
});

async function post(req: Request): Promise<Response> {
  const data = JSON.stringify(await req.json());
  const id = await publisher.incr("floor:id");
  await publisher.publish(CHANNEL, `${id} ${data}`);
  return Response.json({ status: "added" });
}

Deno.serve({
  hostname: values.hostname,
  port: Number(values.port),
  reusePort: true,
  onListen: ({ hostname, port }) =>
    console.log(`Listening on http://${hostname}:${port}/ (fan-out floor)`),
}, (req) => {
  const { pathname } = new URL(req.url);
  if (req.method === "GET" && pathname === "/events") {
    return followers.follow(req);
  }
  if (req.method === "POST" && pathname === "/") return post(req);
  if (req.method === "POST" && pathname === "/users") {
    return Response.json({ token: "floor-0" });
  }
  return new Response("not found", { status: 404 });
});
