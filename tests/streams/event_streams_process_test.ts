/** The event streams over real sockets, as `curl -N` and browsers use them. */
import assert from "node:assert/strict";
import { utf8Header } from "../_support/call.ts";
import { readEvents } from "../_support/event_reader.ts";
import { startServer } from "../_support/program.ts";

Deno.test("SIGTERM with streams open ends them and exits 0 at once, not at the drain deadline", async () => {
  const server = await startServer(["--quiet"]);
  const readers = await Promise.all(
    Array.from({ length: 20 }, async (_, i) => {
      const res = await fetch(`${server.url}${i % 2 ? "quote/" : ""}events`);
      assert.equal(res.status, 200);
      const reader = readEvents(res.body!);
      await reader.next();
      return reader;
    }),
  );
  const start = performance.now();
  assert.equal(await server.stop("SIGTERM"), 0, server.stderr());
  const elapsed = performance.now() - start;
  assert.ok(elapsed < 5000, `exited after ${elapsed.toFixed(0)} ms`);
  for (const reader of readers) {
    let item;
    do item = await reader.next(2000); while (item !== null);
  }
});

Deno.test("curl-style: a post on the wire reaches an open stream as one event with its id", async () => {
  const server = await startServer(["--quiet"]);
  try {
    const token = (await (await fetch(`${server.url}users`, {
      method: "POST",
      body: "zoë",
    })).json()).token;
    const res = await fetch(`${server.url}events`);
    assert.equal(
      res.headers.get("content-type"),
      "text/event-stream; charset=utf-8",
    );
    const reader = readEvents(res.body!);
    await reader.next();
    const posted = await fetch(server.url, {
      method: "POST",
      headers: {
        "x-messaging-token": utf8Header(token),
      },
      body: '{"text":"hello"}',
    });
    assert.equal(posted.status, 200);
    const [event] = await reader.events(1);
    assert.equal(event.id, "1");
    assert.deepEqual(JSON.parse(event.data), {
      text: "hello",
      color: "black",
      user: "zoë",
    });
    await reader.close();
  } finally {
    await server.stop();
  }
});
