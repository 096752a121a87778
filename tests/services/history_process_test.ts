/**
 * `GET /messages` on the real program over sockets, on each store, with
 * `--history=1000`: paging back answers every id once, in order, and the
 * refusals, HEAD and 405 are what the handlers answer.
 */
import assert from "node:assert/strict";
import { CONTENT_TYPE } from "../_support/call.ts";
import { startServer } from "../_support/program.ts";
import { redisServerPath, startRedis } from "../_support/redis_server.ts";

const redisMissing = redisServerPath() === undefined;
if (redisMissing) {
  console.warn("\n!!! SKIPPING the Redis history test: no redis-server !!!\n");
}

async function pageBackThroughAThousand(storeFlags: string[]) {
  const server = await startServer([
    "--quiet",
    "--service=messaging",
    "--history=1000",
    ...storeFlags,
  ]);
  try {
    const url = (path: string) => new URL(path, server.url);
    const { token } = await (await fetch(url("/users"), {
      method: "POST",
      body: "ann",
    })).json();
    for (let i = 1; i <= 1005; i++) {
      const res = await fetch(url("/"), {
        method: "POST",
        headers: { "x-messaging-token": token },
        body: JSON.stringify({ text: `${i}` }),
      });
      assert.equal(res.status, 200, await res.text());
    }
    // 1,005 posted, the newest 1,000 (ids 6 to 1005) retained.
    const texts: string[] = [];
    let before: number | null = null;
    for (let pages = 0; pages < 20; pages++) {
      const query: string = before === null ? "" : `&before=${before}`;
      const res = await fetch(url(`/messages?limit=100${query}`));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
      const page = await res.json();
      for (const { id, message } of page.messages) {
        assert.equal(message.text, `${id}`);
        texts.push(message.text);
      }
      before = page.next;
      if (before === null) break;
    }
    assert.deepEqual(
      texts,
      Array.from({ length: 1000 }, (_, i) => `${1005 - i}`),
    );

    const refused = await fetch(url("/messages?limit=101&before=-3"));
    assert.equal(refused.status, 400);
    assert.deepEqual(
      (await refused.json()).errors.map((e: { name: string }) => e.name),
      ["before", "limit"],
    );
    const head = await fetch(url("/messages?limit=3"), { method: "HEAD" });
    assert.deepEqual([head.status, await head.text()], [200, ""]);
    const post = await fetch(url("/messages"), { method: "POST", body: "x" });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get("allow"), "GET, HEAD");
    await post.body?.cancel();
  } finally {
    assert.equal(await server.stop(), 0);
  }
}

Deno.test("the program pages back through 1,000 messages in memory, each id once, in order", async () => {
  await pageBackThroughAThousand([]);
});

Deno.test({
  name:
    "the program pages back through 1,000 messages in Redis, each id once, in order",
  ignore: redisMissing,
  async fn() {
    const redis = await startRedis();
    try {
      await pageBackThroughAThousand([`--store=${redis.url}`]);
    } finally {
      await redis.kill();
    }
  },
});
