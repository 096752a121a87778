/**
 * The operator's routes' OpenAPI operations.
 * @module
 */

import {
  exactObject,
  type Operation,
  type Operations,
} from "../http/operation.ts";
import { METRICS_CONTENT_TYPE } from "./metrics.ts";

const probe = (
  operation: Pick<Operation, "operationId" | "summary" | "description">,
  description: string,
  status: string,
): Operation => ({
  ...operation,
  answer: {
    description,
    schema: exactObject({ status: { const: status } }),
    example: { status },
  },
});

export const OPERATOR_OPERATIONS: Operations = {
  "/healthz": {
    GET: probe(
      { operationId: "health", summary: "Liveness: the process serves" },
      "Serving.",
      "ok",
    ),
  },
  "/readyz": {
    GET: probe(
      {
        operationId: "readiness",
        summary: "Readiness: the store answers",
        description:
          "The memory store is always ready; Redis is when its subscription to changes is up (else it cannot serve event streams exactly) and it answers a `PING` within a second. Also 503 while the server is stopping. A 503 carries a `reason` an operator acts on (out of memory, read-only replica, unreachable, no subscription).",
      },
      "Ready to serve.",
      "ready",
    ),
  },
  "/metrics": {
    GET: {
      operationId: "metrics",
      summary: "Metrics, in the Prometheus text format",
      description:
        "`lms_http_requests_total{route,method,status}`, `lms_http_request_duration_seconds{route}` (histogram), `lms_event_streams_open`, `lms_event_stream_connections_closing`, `lms_store_failures_total`, `lms_registered_users`, and the process's `lms_process_*` and `lms_event_loop_lag_seconds`. Route labels are the paths above; any other path is `unknown`.",
      answer: {
        description: "The metrics.",
        type: METRICS_CONTENT_TYPE,
        schema: { type: "string" },
        example:
          '# TYPE lms_http_requests_total counter\nlms_http_requests_total{route="/quote",method="GET",status="200"} 3\n',
      },
    },
  },
};
