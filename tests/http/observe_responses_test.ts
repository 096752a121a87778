import assert from "node:assert/strict";
import { observeResponses } from "../../src/http/observe_responses.ts";
import type { ConnectionInfo, Handler } from "../../src/http/router.ts";
import { connectionFrom } from "../_support/call.ts";

interface Seen {
  path: string;
  status: number;
  ms: number;
  info?: ConnectionInfo;
}

function observed(handler: Handler): { handler: Handler; seen: Seen[] } {
  const seen: Seen[] = [];
  return {
    seen,
    handler: observeResponses(handler, (req, res, ms, info) => {
      seen.push({
        path: new URL(req.url).pathname,
        status: res.status,
        ms,
        info,
      });
    }),
  };
}

const req = (path: string) => new Request(`http://service.test${path}`);

Deno.test("an answer given at once is observed once, with its request, response and connection", async () => {
  const info = connectionFrom("192.0.2.1");
  const { handler, seen } = observed(() => new Response(null, { status: 204 }));
  const res = await handler(req("/now"), info);
  assert.equal(res.status, 204);
  assert.equal(seen.length, 1);
  assert.equal(seen[0]?.path, "/now");
  assert.equal(seen[0]?.status, 204);
  assert.equal(seen[0]?.info, info);
  assert.ok((seen[0]?.ms ?? -1) >= 0);
});

Deno.test("a later answer is observed when it comes, with the time it took", async () => {
  let answer = (_res: Response) => {};
  const { handler, seen } = observed(() =>
    new Promise<Response>((resolve) => answer = resolve)
  );
  const pending = handler(req("/later"));
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(seen.length, 0);
  const sent = new Response("done", { status: 201 });
  answer(sent);
  assert.equal(await pending, sent);
  assert.equal(seen.length, 1);
  assert.equal(seen[0]?.status, 201);
  assert.ok((seen[0]?.ms ?? 0) >= 15, `took ${seen[0]?.ms} ms`);
  assert.equal(seen[0]?.info, undefined);
});

Deno.test("a handler that fails is not observed: the failure reaches the caller", async () => {
  const { handler, seen } = observed(() => Promise.reject(new Error("down")));
  await assert.rejects(Promise.resolve(handler(req("/x"))), /down/);
  const sync = observed(() => {
    throw new Error("bug");
  });
  assert.throws(() => sync.handler(req("/y")), /bug/);
  assert.deepEqual([...seen, ...sync.seen], []);
});
