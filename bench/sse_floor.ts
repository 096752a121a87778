/**
 * The floor for `deno task bench:stalled-streams`: an event stream on plain
 * `Deno.serve`, as one would write it without the program, sending each
 * reader the same catch-up the program sends (five events of `--event-bytes`)
 * from a `ReadableStream` that enqueues it at once. What a reader that never
 * reads costs here is what Deno and the kernel cost, whatever the program
 * does. `GET /count` answers how many streams are open. Prints the banner
 * `startServer` waits for.
 * @module
 */

import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    hostname: { type: "string", default: "127.0.0.1" },
    port: { type: "string", default: "0" },
    "event-bytes": { type: "string", default: "61440" },
    // A fresh copy of the catch-up for each reader (as the program encoded
    // it before), or the same bytes for all.
    fresh: { type: "boolean", default: false },
  },
});
const eventBytes = Number(values["event-bytes"]);
const encoder = new TextEncoder();
const events = () =>
  Array.from(
    { length: 5 },
    (_, i) =>
      encoder.encode(
        `id: ${i + 1}\nevent: message\ndata: ${"x".repeat(eventBytes)}\n\n`,
      ),
  );
const shared = events();
let open = 0;

Deno.serve({
  hostname: values.hostname,
  port: Number(values.port),
  onListen: ({ hostname, port }) =>
    console.log(`Listening on http://${hostname}:${port}/ (sse floor)`),
}, (req) => {
  if (new URL(req.url).pathname === "/count") {
    return new Response(String(open));
  }
  const chunks = values.fresh ? events() : shared;
  let counted = true;
  open++;
  const leave = () => {
    if (counted) open--;
    counted = false;
  };
  return new Response(
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode("retry: 1000\n\n"));
        for (const chunk of chunks) controller.enqueue(chunk);
      },
      cancel: leave,
    }),
    {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
      },
    },
  );
});
