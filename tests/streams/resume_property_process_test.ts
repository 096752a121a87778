/**
 * A property over the real program: whatever script of posts and
 * reconnects a reader follows, switching between event streams and
 * WebSockets and between `Last-Event-ID` and `?lastEventId`, it gets every
 * message once, in id order.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { utf8Header } from "../_support/call.ts";
import { readEvents } from "../_support/event_reader.ts";
import { startServer } from "../_support/program.ts";
import { openSocket } from "../_support/socket_reader.ts";

/** How a reader (re)connects. */
type Way = "sse-header" | "sse-query" | "ws-query" | "ws-header";

/**
 * One step: post `posts` messages, open a connection `way` after the last
 * id the reader has, post `live` more while it is open, and read all that
 * is new.
 */
interface Step {
  posts: number;
  way: Way;
  live: number;
}

const steps = fc.array(
  fc.record({
    posts: fc.integer({ min: 0, max: 4 }),
    live: fc.integer({ min: 0, max: 3 }),
    way: fc.constantFrom<Way>(
      "sse-header",
      "sse-query",
      "ws-query",
      "ws-header",
    ),
  }),
  { minLength: 1, maxLength: 6 },
);

/**
 * Opens the stream after `lastId` the `way` says, has `meanwhile` post
 * (and answer how many it posted), and reads `count` plus that many ids.
 */
async function readAfter(
  url: string,
  way: Way,
  lastId: number,
  count: number,
  meanwhile: () => Promise<number>,
): Promise<number[]> {
  const header: Record<string, string> = way.endsWith("header")
    ? { "last-event-id": String(lastId) }
    : {};
  const path = way.endsWith("query")
    ? `events?lastEventId=${lastId}`
    : "events";
  if (way.startsWith("ws")) {
    const socket = await openSocket(`${url}${path}`, header);
    const frames = await socket.frames(count + await meanwhile());
    socket.close();
    return frames.map((f) => f.id ?? -1);
  }
  const res = await fetch(`${url}${path}`, { headers: header });
  const events = readEvents(res.body!);
  const got = await events.events(count + await meanwhile());
  await events.close();
  return got.map((e) => Number(e.id));
}

Deno.test("any script of posts and reconnects, over either transport and either way of resuming, delivers every message once, in id order", async () => {
  const server = await startServer(["--quiet", "--history=100"]);
  try {
    const { url } = server;
    const res = await fetch(`${url}users`, { method: "POST", body: "ann" });
    const { token } = await res.json();
    let stored = 0;
    await fc.assert(
      fc.asyncProperty(steps, async (script: Step[]) => {
        // Each run resumes from what is stored now, as a reader that has it all.
        let lastId = stored;
        const seen: number[] = [];
        const post = async (count: number) => {
          for (let i = 0; i < count; i++) {
            const posted = await fetch(url, {
              method: "POST",
              headers: { "x-messaging-token": utf8Header(token) },
              body: JSON.stringify({ text: `m${stored + 1}` }),
            });
            assert.equal(posted.status, 200);
            await posted.body?.cancel();
            stored++;
          }
          return count;
        };
        for (const { posts, way, live } of script) {
          await post(posts);
          const got = await readAfter(
            url,
            way,
            lastId,
            stored - lastId,
            () => post(live),
          );
          seen.push(...got);
          lastId = got.at(-1) ?? lastId;
        }
        const first = seen[0] ?? lastId;
        assert.deepEqual(seen, seen.map((_, i) => first + i));
        assert.equal(lastId, stored);
      }),
      { numRuns: 15 },
    );
  } finally {
    await server.stop();
  }
});
