import assert from "node:assert/strict";
import { InFlight } from "../../src/http/drain.ts";
import { observeResponses } from "../../src/http/observe_responses.ts";
import type { Handler } from "../../src/http/router.ts";
import { createHandler } from "../../src/program/app.ts";

const req = () => new Request("http://service.test/");

/** A promise and the function that settles it. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Whether `promise` has settled by the time queued callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(() => done = true, () => done = true);
  await new Promise((r) => setTimeout(r, 0));
  return done;
}

/** `handler` counted in `inFlight` as the program counts it; the statuses it answered go to `observed`. */
function counted(handler: Handler, observed: number[] = []) {
  const inFlight = new InFlight();
  return {
    handler: observeResponses(
      handler,
      (_req, res) => observed.push(res.status),
      inFlight,
    ),
    drain: (ms: number) => inFlight.drain(ms),
  };
}

Deno.test("drain resolves at once with nothing in flight", async () => {
  const { drain } = counted(() => new Response("ok"));
  assert.ok(await settled(drain(60_000)));
});

Deno.test("drain waits for every request in flight, and the answers are the handler's", async () => {
  const one = deferred<Response>();
  const two = deferred<Response>();
  let calls = 0;
  const observed: number[] = [];
  const { handler, drain } = counted(
    () => (calls++ === 0 ? one : two).promise,
    observed,
  );
  const first = handler(req());
  const second = handler(req());
  const drained = drain(60_000);
  assert.equal(await settled(drained), false);
  one.resolve(new Response("one", { status: 201 }));
  assert.equal(await (await first).text(), "one");
  assert.equal(await settled(drained), false);
  // A failed answer is finished too, and is no answer to observe.
  two.reject(new Error("gone"));
  await assert.rejects(Promise.resolve(second), /gone/);
  assert.ok(await settled(drained));
  assert.deepEqual(observed, [201]);
});

Deno.test("a handler that throws or answers at once is not left in flight", async () => {
  let mode: "throw" | "sync" = "throw";
  const { handler, drain } = counted(() => {
    if (mode === "throw") throw new Error("bad");
    return new Response("now");
  });
  assert.throws(() => handler(req()), /bad/);
  mode = "sync";
  assert.equal(await (handler(req()) as Response).text(), "now");
  assert.ok(await settled(drain(60_000)));
});

Deno.test("drain gives up after its timeout when a request never finishes", async () => {
  const never = deferred<Response>();
  const { handler, drain } = counted(() => never.promise);
  handler(req());
  let failTimer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    drain(30).then(() => "drained"),
    new Promise((r) =>
      failTimer = setTimeout(() => r("still waiting"), 10_000)
    ),
  ]);
  clearTimeout(failTimer);
  assert.equal(outcome, "drained");
  never.resolve(new Response(null));
});

Deno.test("createHandler counts a request whose body is still arriving until it is answered", async () => {
  const inFlight = new InFlight();
  const handler = createHandler({ inFlight, bodyTimeoutMs: 60_000 });
  let send = (_: Uint8Array) => {};
  let end = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      send = (bytes) => controller.enqueue(bytes);
      end = () => controller.close();
    },
  });
  const answer = handler(
    new Request("http://h/quote", { method: "POST", body }),
  );
  const drained = inFlight.drain(60_000);
  assert.equal(await settled(drained), false);
  send(new TextEncoder().encode("Drained."));
  end();
  assert.equal((await answer).status, 200);
  assert.ok(await settled(drained));
});
