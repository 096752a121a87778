/**
 * Followers the plain way, shared by the plain peer (`plain.ts`, the floor
 * of `bench:streams`) and the fan-out floor of `bench:scale`: a `Set` of
 * event streams and one of WebSockets, each event encoded once per format
 * and handed to every follower in a loop, with no catch-up, heartbeat or
 * bound on what waits for a slow reader. Sockets keep Deno's default
 * `idleTimeout` (30 s: a ping 15 s after the client's last frame, as the
 * program's default `--heartbeat-ms`).
 * @module
 */

const encoder = new TextEncoder();

/** Followers of one stream: how a request joins, and how an event reaches them all. */
export interface FanOut {
  /** Answers `GET /events`: an event stream, or a WebSocket when the request asks for the upgrade. */
  follow(req: Request): Response;
  /** Sends message `id`, `data` its JSON, to every follower. */
  announce(id: number | string, data: string): void;
}

/** An empty set of followers. */
export function fanOut(): FanOut {
  const readers = new Set<ReadableStreamDefaultController<Uint8Array>>();
  const sockets = new Set<WebSocket>();
  return {
    follow(req) {
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
          readers.add(controller);
          // As the program opens its streams: the status goes out at once.
          controller.enqueue(encoder.encode("retry: 1000\n\n"));
        },
        cancel() {
          readers.delete(reader);
        },
      });
      return new Response(body, {
        headers: {
          "content-type": "text/event-stream",
          "cache-control": "no-store",
        },
      });
    },
    announce(id, data) {
      const sse = encoder.encode(
        `id: ${id}\nevent: message\ndata: ${data}\n\n`,
      );
      for (const reader of readers) reader.enqueue(sse);
      const frame = `{"event":"message","id":${id},"data":${data}}`;
      for (const socket of sockets) socket.send(frame);
    },
  };
}
