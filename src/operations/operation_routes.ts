/**
 * The operator's routes: `/healthz`, `/readyz` and `/metrics`.
 * @module
 */

import { cpuUsage } from "node:process";
import { setImmediate } from "node:timers";
import { STATUS_MESSAGES } from "../http/catalogue.ts";
import { jsonResponse } from "../http/response.ts";
import type { Routes } from "../http/router.ts";
import type {
  Awaitable,
  Readiness,
  StoreHealth,
  UserDirectory,
} from "../store/store.ts";
import type { StreamHub } from "../streams/stream_hub.ts";
import type { AuthOutcome } from "../auth/guesses.ts";
import { type Metrics, METRICS_CONTENT_TYPE } from "./metrics.ts";

const HEALTHY = JSON.stringify({ status: "ok" });
const READY = JSON.stringify({ status: "ready" });

export interface OperationRouteOptions {
  store: StoreHealth & Pick<UserDirectory, "userCount">;
  hub: StreamHub;
  metrics: Metrics;
  /** Answered 503 because the store failed. */
  storeFailures: () => number;
  /** Failed authentications, and requests refused for guessing, so far. */
  authOutcomes: Readonly<Record<AuthOutcome, number>>;
}

/** In seconds. `setImmediate`: Deno delays a zero timer by a millisecond or more even when idle. */
function eventLoopLag(): Promise<number> {
  const start = performance.now();
  return new Promise((resolve) =>
    setImmediate(() => resolve((performance.now() - start) / 1000))
  );
}

const startSeconds = Math.round(performance.timeOrigin / 1000);

function sampleAll(options: OperationRouteOptions): void {
  const { metrics, store, hub } = options;
  type Read = () => Awaitable<number | undefined>;
  const gauge = (name: string, help: string, read: Read) =>
    metrics.sample(name, help, "gauge", read);
  const counter = (name: string, help: string, read: Read) =>
    metrics.sample(name, help, "counter", read);
  gauge("lms_event_streams_open", "Event streams open.", () => hub.size);
  gauge(
    "lms_event_stream_connections_closing",
    "Connections of ended event streams their clients have not closed yet; they count against the stream caps.",
    () => hub.closing,
  );
  counter(
    "lms_store_failures_total",
    "Requests answered 503 because the store could not be reached.",
    options.storeFailures,
  );
  counter(
    "lms_auth_failures_total",
    "Requests whose credential did not authenticate.",
    () => options.authOutcomes.failed,
  );
  counter(
    "lms_auth_refused_total",
    "Requests refused 429 because their client failed to authenticate too often.",
    () => options.authOutcomes.refused,
  );
  gauge("lms_registered_users", "Users registered.", () => store.userCount());
  gauge(
    "lms_process_resident_memory_bytes",
    "Resident memory of the process.",
    () => Deno.memoryUsage().rss,
  );
  gauge(
    "lms_process_heap_used_bytes",
    "JavaScript heap in use.",
    () => Deno.memoryUsage().heapUsed,
  );
  counter(
    "lms_process_cpu_seconds_total",
    "CPU time of the process, user and system.",
    () => {
      const { user, system } = cpuUsage();
      return (user + system) / 1e6;
    },
  );
  gauge(
    "lms_process_start_time_seconds",
    "When the process started, in seconds since the Unix epoch.",
    () => startSeconds,
  );
  gauge(
    "lms_event_loop_lag_seconds",
    "How long the event loop took to run a callback queued at the scrape.",
    eventLoopLag,
  );
}

export function operationRoutes(options: OperationRouteOptions): Routes {
  const { store, metrics } = options;
  sampleAll(options);
  // Not ready: the usual 503 envelope and `Retry-After`, and what an operator is to act on.
  const readiness = (readiness: Readiness) =>
    readiness.ready ? jsonResponse(READY) : jsonResponse(
      JSON.stringify({
        status: 503,
        message: STATUS_MESSAGES[503],
        reason: readiness.reason,
      }),
      503,
      { "retry-after": "1" },
    );
  return {
    "/healthz": { GET: () => jsonResponse(HEALTHY) },
    "/readyz": {
      GET() {
        const ready = store.isReady();
        return ready instanceof Promise
          ? ready.then(readiness)
          : readiness(ready);
      },
    },
    "/metrics": {
      GET: async () =>
        new Response(await metrics.render(), {
          headers: { "content-type": METRICS_CONTENT_TYPE },
        }),
    },
  };
}
