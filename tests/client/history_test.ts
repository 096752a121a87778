/** The client library's history: `olderMessages` one page, `history()` every page, against the service's handler. */
import assert from "node:assert/strict";
import { MessagingClient, ServiceError } from "../../src/client/client.ts";
import { createHandler } from "../../src/program/app.ts";
import { MemoryStore } from "../../src/store/memory_store.ts";

/** A client of a fresh service holding `count` messages "1".."count", and the paths it asked for. */
async function clientWith(count: number, history = 100) {
  const handler = createHandler({ store: new MemoryStore({ history }) });
  const asked: string[] = [];
  const chat = new MessagingClient("http://service.test/base", {
    fetch: (input, init) => {
      const request = new Request(input, init);
      const url = new URL(request.url);
      asked.push(url.pathname + url.search);
      // The service serves at the root; the client's base path is kept.
      url.pathname = url.pathname.replace(/^\/base/, "");
      return Promise.resolve(handler(new Request(url, request)));
    },
  });
  await chat.register("ann");
  for (let i = 1; i <= count; i++) await chat.post(`${i}`);
  asked.length = 0;
  return { chat, asked };
}

async function collect(iterable: AsyncIterable<{ id: number }>) {
  const ids: number[] = [];
  for await (const { id } of iterable) ids.push(id);
  return ids;
}

const range = (from: number, to: number) =>
  Array.from({ length: from - to + 1 }, (_, i) => from - i);

Deno.test("history() goes back through every page, newest first, each message once", async () => {
  const { chat, asked } = await clientWith(45);
  const seen: string[] = [];
  for await (const { id, message } of chat.history({ limit: 10 })) {
    assert.equal(message.text, `${id}`);
    assert.equal(message.user, "ann");
    seen.push(message.text);
  }
  assert.deepEqual(seen, range(45, 1).map(String));
  assert.deepEqual(asked, [
    "/base/messages?limit=10",
    "/base/messages?before=36&limit=10",
    "/base/messages?before=26&limit=10",
    "/base/messages?before=16&limit=10",
    "/base/messages?before=6&limit=10",
  ]);
});

Deno.test("history() fetches a page only when the loop wants more, and starts below before", async () => {
  const { chat, asked } = await clientWith(45);
  const ids: number[] = [];
  for await (const { id } of chat.history({ before: 30 })) {
    ids.push(id);
    if (ids.length === 20) break;
  }
  assert.deepEqual(ids, range(29, 10));
  assert.deepEqual(
    asked,
    ["/base/messages?before=30"],
    "one page of 20, no more",
  );
  assert.deepEqual(await collect(chat.history({ before: 3 })), [2, 1]);
});

Deno.test("history() of an empty history, or one whose oldest left, ends at what is kept", async () => {
  const empty = await clientWith(0);
  assert.deepEqual(await collect(empty.chat.history()), []);
  const trimmed = await clientWith(30, 10);
  assert.deepEqual(
    await collect(trimmed.chat.history({ limit: 4 })),
    range(30, 21),
  );
  assert.equal(trimmed.asked.length, 3);
});

Deno.test("olderMessages answers one page and its next; a limit out of range is the service's 400", async () => {
  const { chat } = await clientWith(5);
  const page = await chat.olderMessages({ limit: 2 });
  assert.deepEqual(page.messages.map((m) => m.id), [5, 4]);
  assert.equal(page.next, 4);
  assert.deepEqual((await chat.olderMessages({ before: 2 })).next, null);
  for (const limit of [0, 101, 1.5]) {
    await assert.rejects(chat.olderMessages({ limit }), (error) => {
      assert.ok(error instanceof ServiceError);
      assert.equal(error.status, 400);
      assert.deepEqual(error.errors.map((e) => e.name), ["limit"]);
      return true;
    });
  }
  await assert.rejects(collect(chat.history({ before: 0 })), ServiceError);
});
