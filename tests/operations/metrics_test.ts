/**
 * `/metrics` at handler level: counters move by exactly the requests made,
 * the histogram agrees with them, clients cannot add labels, and the
 * sampled values follow the service's state.
 */
import assert from "node:assert/strict";
import { createHandler } from "../../src/program/app.ts";
import { MemoryStore } from "../../src/store/memory_store.ts";
import { StoreUnavailableError } from "../../src/store/store.ts";
import { DURATION_BUCKETS } from "../../src/operations/metrics.ts";
import type { Handler } from "../../src/http/router.ts";
import { call } from "../_support/call.ts";

const METRICS_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** The samples of a scrape, by series (name and labels, as written). */
async function scrape(handler: Handler): Promise<Map<string, number>> {
  const res = await handler(new Request("http://service.test/metrics"));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), METRICS_TYPE);
  const samples = new Map<string, number>();
  const typed = new Set<string>();
  for (const line of (await res.text()).split("\n")) {
    if (line === "") continue;
    const [, typedName] =
      line.match(/^# TYPE (\w+) (counter|gauge|histogram)$/) ?? [];
    if (typedName !== undefined) {
      assert.ok(!typed.has(typedName), `${typedName} typed twice`);
      typed.add(typedName);
      continue;
    }
    if (line.startsWith("# HELP ")) continue;
    const [, series, text] = line.match(/^(lms_\w+(?:\{[^}]*\})?) (\S+)$/) ??
      [];
    assert.ok(series !== undefined, `not a sample line: ${line}`);
    assert.ok(!samples.has(series), `${series} twice`);
    const value = Number(text);
    assert.ok(Number.isFinite(value), line);
    samples.set(series, value);
  }
  return samples;
}

const requests = (route: string, method: string, status: number) =>
  `lms_http_requests_total{route="${route}",method="${method}",status="${status}"}`;

Deno.test("request counters move by exactly the requests made, by route, method and status", async () => {
  const handler = createHandler({});
  const before = await scrape(handler);
  for (let i = 0; i < 7; i++) await call(handler, "GET", "/quote");
  for (let i = 0; i < 3; i++) {
    await call(handler, "POST", "/quote", { body: "Fine." });
  }
  await call(handler, "POST", "/quote", { body: "bad" });
  await call(handler, "HEAD", "/");
  await call(handler, "DELETE", "/");
  const after = await scrape(handler);
  const moved = (series: string) =>
    (after.get(series) ?? 0) - (before.get(series) ?? 0);
  assert.equal(moved(requests("/quote", "GET", 200)), 7);
  assert.equal(moved(requests("/quote", "POST", 200)), 3);
  assert.equal(moved(requests("/quote", "POST", 400)), 1);
  assert.equal(moved(requests("/", "HEAD", 200)), 1);
  assert.equal(moved(requests("/", "DELETE", 405)), 1);
  // The first scrape itself is counted once it is answered.
  assert.equal(moved(requests("/metrics", "GET", 200)), 1);
  const total = (samples: Map<string, number>) =>
    [...samples].filter(([k]) => k.startsWith("lms_http_requests_total"))
      .reduce((sum, [, v]) => sum + v, 0);
  assert.equal(total(after) - total(before), 7 + 3 + 1 + 1 + 1 + 1);
});

Deno.test("each route's histogram agrees with its counters: cumulative buckets, +Inf equal to the count", async () => {
  const handler = createHandler({});
  for (let i = 0; i < 5; i++) await call(handler, "GET", "/");
  await call(handler, "POST", "/users", { body: "ann" });
  await call(handler, "GET", "/nowhere");
  const samples = await scrape(handler);
  const routes = new Set(
    [...samples.keys()].flatMap((k) =>
      k.match(/^lms_http_request_duration_seconds_count\{route="([^"]*)"\}$/)
        ?.[1] ?? []
    ),
  );
  assert.ok(routes.has("/") && routes.has("/users") && routes.has("unknown"));
  for (const route of routes) {
    const bucket = (le: string) =>
      samples.get(
        `lms_http_request_duration_seconds_bucket{route="${route}",le="${le}"}`,
      )!;
    const counts = [...DURATION_BUCKETS.map(String), "+Inf"].map(bucket);
    counts.reduce((previous, count) => {
      assert.ok(count >= previous, route);
      return count;
    });
    const count = samples.get(
      `lms_http_request_duration_seconds_count{route="${route}"}`,
    );
    assert.equal(bucket("+Inf"), count, route);
    const counted = [...samples].filter(([k]) =>
      k.startsWith(`lms_http_requests_total{route="${route}",`)
    ).reduce((sum, [, v]) => sum + v, 0);
    assert.equal(count, counted, route);
    assert.ok(
      samples.get(`lms_http_request_duration_seconds_sum{route="${route}"}`)! >=
        0,
    );
  }
  assert.equal(
    samples.get(`lms_http_request_duration_seconds_count{route="/"}`),
    5,
  );
});

Deno.test("unknown paths and methods add no labels, however many clients make up", async () => {
  const handler = createHandler({});
  const seriesCount = async () => (await scrape(handler)).size;
  await call(handler, "GET", "/nowhere");
  await call(handler, "PATCH", "/quote");
  // The first scrape adds the series of /metrics itself.
  await scrape(handler);
  const before = await seriesCount();
  for (let i = 0; i < 200; i++) {
    await call(handler, "GET", `/x${crypto.randomUUID()}`);
    await call(handler, `M${i}`, "/quote");
  }
  assert.equal(await seriesCount(), before);
  const samples = await scrape(handler);
  assert.equal(samples.get(requests("unknown", "GET", 404)), 201);
  assert.equal(samples.get(requests("/quote", "other", 405)), 201);
});

Deno.test("a stream ended while its connection is not yet gone counts as closing, not open, and holds its client's place until then", async () => {
  const handler = createHandler({
    heartbeatMs: 60_000,
    maxStreamsPerClient: 1,
  });
  const connection = Promise.withResolvers<void>();
  const info = {
    remoteAddr: { transport: "tcp" as const, hostname: "192.0.2.9", port: 1 },
    completed: connection.promise,
  };
  const events = () => handler(new Request("http://service.test/events"), info);
  const stream = await events();
  assert.equal(stream.status, 200);
  await stream.body!.cancel();
  let samples = await scrape(handler);
  assert.equal(samples.get("lms_event_streams_open"), 0);
  assert.equal(samples.get("lms_event_stream_connections_closing"), 1);
  assert.equal((await events()).status, 429);
  connection.resolve();
  await connection.promise;
  samples = await scrape(handler);
  assert.equal(samples.get("lms_event_stream_connections_closing"), 0);
  const again = await handler(new Request("http://service.test/events"), {
    remoteAddr: info.remoteAddr,
  });
  assert.equal(again.status, 200);
  await again.body!.cancel();
});

Deno.test("sampled values follow the service: users, open streams, store failures, the process", async () => {
  const store = new MemoryStore();
  const handler = createHandler({ store, heartbeatMs: 60_000 });
  await call(handler, "POST", "/users", { body: "ann" });
  await call(handler, "POST", "/users", { body: "bob" });
  const stream = await handler(new Request("http://service.test/events"));
  let samples = await scrape(handler);
  assert.equal(samples.get("lms_registered_users"), 2);
  assert.equal(samples.get("lms_event_streams_open"), 1);
  assert.equal(samples.get("lms_store_failures_total"), 0);
  assert.ok(samples.get("lms_process_resident_memory_bytes")! > 1e6);
  assert.ok(samples.get("lms_process_heap_used_bytes")! > 0);
  assert.ok(samples.get("lms_process_cpu_seconds_total")! > 0);
  assert.ok(samples.get("lms_event_loop_lag_seconds")! >= 0);
  const start = samples.get("lms_process_start_time_seconds")!;
  assert.ok(Math.abs(start - Date.now() / 1000) < 3600, "started lately");
  await stream.body!.cancel();
  samples = await scrape(handler);
  assert.equal(samples.get("lms_event_streams_open"), 0);

  class DownStore extends MemoryStore {
    override getQuote(): string {
      throw new StoreUnavailableError("down");
    }
  }
  const down = createHandler({ store: new DownStore() });
  assert.equal((await call(down, "GET", "/quote")).status, 503);
  assert.equal((await call(down, "GET", "/quote")).status, 503);
  assert.equal((await scrape(down)).get("lms_store_failures_total"), 2);

  // A write refused by the rate limit is the client's doing, not a failure.
  const limited = createHandler({ rateLimit: { burst: 1, periodMs: 60_000 } });
  await call(limited, "POST", "/quote", { body: "One." });
  assert.equal(
    (await call(limited, "POST", "/quote", { body: "Two." })).status,
    429,
  );
  assert.equal((await scrape(limited)).get("lms_store_failures_total"), 0);
});

Deno.test("the event-loop lag is how long a callback queued at the scrape waited: a loop kept busy shows in it", async () => {
  const handler = createHandler({});
  const answer = handler(new Request("http://service.test/metrics"));
  // Bounded by time: 50 ms in which the event loop cannot turn.
  const until = performance.now() + 50;
  while (performance.now() < until) {
    // busy
  }
  const text = await (await answer).text();
  const lag = Number(text.match(/^lms_event_loop_lag_seconds (\S+)$/m)?.[1]);
  assert.ok(lag >= 0.045 && lag < 5, `lag ${lag} s`);
});
