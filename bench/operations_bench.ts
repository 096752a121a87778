/**
 * What operating costs per request: counting it, with `prom-client` (the
 * library every Node service uses) against the project's own counters for
 * the same series (requests by route, method and status; a duration
 * histogram by route), and spending a write of the rate limit in memory.
 * Run by `deno task bench:micro`.
 * @module
 */

import client from "prom-client";
import { DURATION_BUCKETS, Metrics } from "../src/operations/metrics.ts";
import { requestPath } from "../src/http/request_path.ts";
import { TokenBuckets } from "../src/store/token_buckets.ts";
import { clientAddressOf } from "../src/http/client_address.ts";

const req = new Request("http://127.0.0.1:8000/");
const ROUTES = ["/", "/users", "/quote", "/events", "/quote/events"];

const registry = new client.Registry();
const requests = new client.Counter({
  name: "lms_http_requests_total",
  help: "Requests answered, by route, method and status.",
  labelNames: ["route", "method", "status"],
  registers: [registry],
});
const durations = new client.Histogram({
  name: "lms_http_request_duration_seconds",
  help: "Time to answer, by route.",
  labelNames: ["route"],
  buckets: DURATION_BUCKETS,
  registers: [registry],
});
const routes = new Set(ROUTES);
Deno.bench("prom-client: count one request", { group: "metrics" }, () => {
  const path = requestPath(req);
  const route = routes.has(path) ? path : "unknown";
  requests.inc({ route, method: req.method, status: 200 });
  durations.observe({ route }, 0.0002);
});

const metrics = new Metrics();
metrics.track(ROUTES);
Deno.bench("lms Metrics: count one request", {
  group: "metrics",
  baseline: true,
}, () => {
  metrics.observe(req, 200, 0.0002);
});

const buckets = new TokenBuckets();
const rate = { burst: 1_000_000_000, periodMs: 1 };
const clientOf = clientAddressOf();
const peer: Deno.ServeHandlerInfo<Deno.NetAddr> = {
  remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 40000 },
  completed: Promise.resolve(),
};
Deno.bench("rate limit: spend one write of a client", () => {
  buckets.take(clientOf(req, peer), rate);
});
