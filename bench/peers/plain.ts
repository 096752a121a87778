/**
 * Peer: the API on plain `Deno.serve`, routed by a `switch` on the path, as
 * one would write it without a framework. Run by `deno task bench`. Its
 * `GET /events` is the floor of `deno task bench:streams`: each message
 * posted, encoded once per format, goes to every open event stream and
 * WebSocket the simplest way (a loop over a `Set`), with no catch-up,
 * heartbeat or bound on what waits for a slow reader. Its sockets keep
 * Deno's default `idleTimeout` (30 s): Deno pings each 15 s after its
 * client's last frame, as it does the program's at the default
 * `--heartbeat-ms`.
 * @module
 */

import * as api from "./peer_api.ts";

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

const sseReaders = new Set<ReadableStreamDefaultController<Uint8Array>>();
const sockets = new Set<WebSocket>();
let lastId = 0;
const encoder = new TextEncoder();

function events(req: Request): Response {
  if (req.headers.get("upgrade")?.toLowerCase() === "websocket") {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onopen = () => sockets.add(socket);
    socket.onclose = () => sockets.delete(socket);
    return response;
  }
  let reader: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      reader = controller;
      sseReaders.add(controller);
      // As the program opens its streams: the status goes out at once.
      controller.enqueue(encoder.encode("retry: 1000\n\n"));
    },
    cancel() {
      sseReaders.delete(reader);
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream",
      "cache-control": "no-store",
    },
  });
}

function announce(message: unknown): void {
  const id = ++lastId;
  const data = JSON.stringify(message);
  const sse = encoder.encode(`id: ${id}\nevent: message\ndata: ${data}\n\n`);
  for (const reader of sseReaders) reader.enqueue(sse);
  const frame = `{"event":"message","id":${id},"data":${data}}`;
  for (const socket of sockets) socket.send(frame);
}

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
      if (answer.status === 200) announce(api.newestMessage());
      return reply(answer);
    }
    case "POST /users": {
      const body = await read(req);
      return reply(body ? api.register(body) : api.TOO_LARGE);
    }
    case "GET /events":
      return events(req);
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
