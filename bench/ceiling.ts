/**
 * The ceiling servers the benchmark compares against: what Deno's HTTP stack
 * does with no application at all. `ceiling` answers one constant JSON body
 * without reading the request; `--read` (`ceiling-read`) reads the whole
 * request body first. Prints the same banner as the program. `--node` also
 * loads the `node:` modules the program loads (its flags, CPU time and
 * event-loop lag), so that `bench:memory` can show what Deno's Node layer
 * costs a server that does nothing else.
 * @module
 */

// A string: Deno 2.9 builds a Response of a string faster than of bytes.
const BODY = '{"status":"ok"}';
const HEADERS = { "content-type": "application/json; charset=UTF-8" };
const read = Deno.args.includes("--read");
if (Deno.args.includes("--node")) {
  await Promise.all([
    import("node:util"),
    import("node:process"),
    import("node:timers"),
  ]);
}

Deno.serve(
  {
    port: 0,
    hostname: "127.0.0.1",
    onListen: ({ port }) =>
      console.log(`Listening on http://127.0.0.1:${port}/ (services: ceiling)`),
  },
  read
    ? async (req) => {
      await req.bytes();
      return new Response(BODY, { headers: HEADERS });
    }
    : () => new Response(BODY, { headers: HEADERS }),
);
