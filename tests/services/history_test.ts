/** `GET /messages`: the history page by page, called as handlers with `new Request`, on both stores. */
import assert from "node:assert/strict";
import { createHandler } from "../../src/program/app.ts";
import { createMessagingService } from "../../src/services/messaging.ts";
import type { Handler } from "../../src/http/router.ts";
import { MemoryStore } from "../../src/store/memory_store.ts";
import type { Store } from "../../src/store/store.ts";
import { call, CONTENT_TYPE, storeTest } from "../_support/call.ts";

/** Registers `name` and posts `count` messages as it, `{"text":"<n>"}` for n = 1, 2, ... */
async function post(svc: Handler, count: number, name = "ann") {
  const token = (await call(svc, "POST", "/users", { body: name })).json.token;
  for (let n = 1; n <= count; n++) {
    const res = await call(svc, "POST", "/", {
      token,
      body: JSON.stringify({ text: `${n}` }),
    });
    assert.equal(res.status, 200, res.text);
  }
  return token;
}

/** The page `query` answers, checked to be a 200 JSON page. */
async function page(svc: Handler, query = "") {
  const res = await call(svc, "GET", `/messages${query}`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
  assert.deepEqual(Object.keys(res.json), ["messages", "next"]);
  return {
    ids: res.json.messages.map((m: { id: number }) => m.id) as number[],
    texts: res.json.messages.map((m: { message: { text: string } }) =>
      m.message.text
    ) as string[],
    next: res.json.next as number | null,
  };
}

const range = (from: number, to: number) =>
  Array.from({ length: from - to + 1 }, (_, i) => from - i);

storeTest("an empty history is one empty page with no next", async (store) => {
  const svc = createMessagingService({ store });
  assert.deepEqual(await page(svc), { ids: [], texts: [], next: null });
  assert.deepEqual(await page(svc, "?before=7&limit=3"), {
    ids: [],
    texts: [],
    next: null,
  });
});

storeTest(
  "pages go back 20 at a time by default, each next the following page's before, null at the end",
  async (store: Store) => {
    const svc = createMessagingService({ store });
    await post(svc, 45);
    const first = await page(svc);
    assert.deepEqual(first.ids, range(45, 26));
    assert.deepEqual(first.texts, range(45, 26).map(String));
    assert.equal(first.next, 26);
    const second = await page(svc, "?before=26");
    assert.deepEqual([second.ids, second.next], [range(25, 6), 6]);
    const last = await page(svc, `?before=${second.next}`);
    assert.deepEqual([last.ids, last.next], [range(5, 1), null]);
    assert.deepEqual(await page(svc, "?limit=45"), {
      ids: range(45, 1),
      texts: range(45, 1).map(String),
      next: null,
    });
    const small = await page(svc, "?before=10&limit=1");
    assert.deepEqual([small.ids, small.next], [[9], 9]);
  },
);

storeTest(
  "each message is answered as GET / shows it, numbers digit for digit",
  async (store: Store) => {
    const svc = createMessagingService({ store });
    const token = await post(svc, 6);
    await call(svc, "POST", "/", {
      token,
      body: '{"text":"big","n":1e400,"m":1.50,"color":"red"}',
    });
    const newest = await call(svc, "GET", "/");
    const res = await call(svc, "GET", "/messages?limit=5");
    assert.deepEqual(
      res.json.messages.map((m: { message: unknown }) => m.message),
      newest.json,
    );
    assert.ok(
      res.text.startsWith(
        '{"messages":[{"id":7,"message":{"text":"big","n":1e400,"m":1.50,"color":"red","user":"ann"}},',
      ),
      res.text,
    );
  },
);

storeTest(
  "messages that left the history are not answered, and an id that never existed is no error",
  async (store: Store) => {
    const svc = createMessagingService({ store });
    await post(svc, 12);
    // history 5: ids 8..12 are retained
    assert.deepEqual((await page(svc)).ids, range(12, 8));
    assert.equal((await page(svc)).next, null);
    assert.deepEqual(await page(svc, "?before=8"), {
      ids: [],
      texts: [],
      next: null,
    });
    assert.deepEqual((await page(svc, "?before=3")).ids, []);
    const beyond = await page(svc, "?before=9000000000000000&limit=2");
    assert.deepEqual([beyond.ids, beyond.next], [[12, 11], 11]);
    assert.deepEqual((await page(svc, "?before=10")).ids, [9, 8]);
  },
  { history: 5 },
);

const BAD = [
  "abc",
  "-1",
  "0",
  "1.5",
  "99999999999999999999",
  "",
  "1e3",
  "+5",
  " 5",
  "0x10",
];

storeTest(
  "a before or limit that is not a whole number in range is 400 naming it, both when both are",
  async (store: Store) => {
    const svc = createMessagingService({ store });
    await post(svc, 3);
    const beforeEntry = {
      location: "url",
      name: "before",
      description: "before must be a whole number from 1 to 9007199254740991",
    };
    const limitEntry = {
      location: "url",
      name: "limit",
      description: "limit must be a whole number from 1 to 100",
    };
    const refused = async (query: string, errors: unknown[]) => {
      const res = await call(svc, "GET", `/messages?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal(res.headers.get("content-type"), CONTENT_TYPE);
      assert.deepEqual(res.json, { status: "error", errors }, query);
    };
    for (const bad of [...BAD, "9007199254740992"]) {
      await refused(`before=${encodeURIComponent(bad)}`, [beforeEntry]);
    }
    for (const bad of [...BAD, "101", "1000"]) {
      await refused(`limit=${encodeURIComponent(bad)}`, [limitEntry]);
    }
    await refused("limit=0&before=x", [beforeEntry, limitEntry]);
    // The edges of each range are served.
    assert.deepEqual((await page(svc, "?before=101&limit=100")).ids, [3, 2, 1]);
    assert.deepEqual(
      (await page(svc, "?before=9007199254740991&limit=1")).ids,
      [3],
    );
    assert.deepEqual((await page(svc, "?before=1")).ids, []);
    assert.deepEqual((await page(svc, "?before=003&limit=01")).ids, [2]);
    // A parameter given twice counts by its first value.
    assert.deepEqual((await page(svc, "?limit=1&limit=x")).ids, [3]);
    assert.deepEqual((await page(svc, "?before=3&before=1&limit=5")).ids, [
      2,
      1,
    ]);
    await refused("limit=x&limit=1", [limitEntry]);
  },
);

Deno.test("HEAD /messages answers GET's status and headers with no body; other methods are 405", async () => {
  const svc = createMessagingService({ store: new MemoryStore() });
  await post(svc, 2);
  const get = await call(svc, "GET", "/messages");
  const head = await call(svc, "HEAD", "/messages");
  assert.equal(head.status, 200);
  assert.equal(head.text, "");
  assert.equal(head.headers.get("content-type"), CONTENT_TYPE);
  assert.equal(
    head.headers.get("content-length"),
    String(new TextEncoder().encode(get.text).length),
    "the length GET's body has",
  );
  const badHead = await call(svc, "HEAD", "/messages?limit=0");
  assert.deepEqual([badHead.status, badHead.text], [400, ""]);
  for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
    const res = await call(svc, method, "/messages", {
      body: method === "POST" ? "{}" : undefined,
    });
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.get("allow"), "GET, HEAD");
    assert.deepEqual(res.json, { status: 405, message: "Method Not Allowed" });
  }
  assert.deepEqual((await page(svc)).ids, [2, 1], "nothing changed");
});

Deno.test("GET /messages is messaging's: served beside it, 404 with the quote service alone", async () => {
  const all = createHandler({ store: new MemoryStore() });
  assert.equal((await call(all, "GET", "/messages")).status, 200);
  const quote = createHandler({ service: "quote", store: new MemoryStore() });
  const res = await call(quote, "GET", "/messages");
  assert.deepEqual([res.status, res.json], [404, {
    status: 404,
    message: "Not Found",
  }]);
});

Deno.test("an allowed origin may read /messages, as it may read /, preflight included", async () => {
  const origin = "https://pages.example";
  const handler = createHandler({
    store: new MemoryStore(),
    corsOrigins: [origin],
  });
  const res = await call(handler, "GET", "/messages?limit=2", {
    headers: { origin },
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("access-control-allow-origin"), origin);
  const bad = await call(handler, "GET", "/messages?limit=x", {
    headers: { origin },
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.headers.get("access-control-allow-origin"), origin);
  const preflight = await call(handler, "OPTIONS", "/messages", {
    headers: { origin, "access-control-request-method": "GET" },
  });
  assert.equal(preflight.status, 204);
  assert.match(
    preflight.headers.get("access-control-allow-methods") ?? "",
    /\bGET\b/,
  );
  const elsewhere = await call(handler, "GET", "/messages", {
    headers: { origin: "https://elsewhere.example" },
  });
  assert.equal(elsewhere.headers.get("access-control-allow-origin"), null);
});
