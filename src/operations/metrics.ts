/**
 * Prometheus metrics: two map lookups per request, the text built when scraped (docs/architecture.md, "Metrics").
 * @module
 */

import { requestPath } from "../http/request_path.ts";
import type { Awaitable } from "../store/store.ts";

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** One label for every path the table does not serve, whatever clients ask for. */
export const UNKNOWN_ROUTE = "unknown";

const BOUNDS_MS = [0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000];

/** Upper bounds of the duration histogram's buckets, in seconds. */
export const DURATION_BUCKETS = BOUNDS_MS.map((ms) => ms / 1000);

/** Any other method counts as `other`, so clients cannot add labels. */
const METHODS = new Set(["DELETE", "GET", "HEAD", "OPTIONS", "POST"]);

class RouteStats {
  /** Requests by method, then status. */
  readonly requests = new Map<string, Map<number, number>>();
  /** How many durations fell in each bucket (not cumulative); the last is `+Inf`. */
  readonly buckets = new Float64Array(DURATION_BUCKETS.length + 1);
  sum = 0;
  count = 0;

  add(method: string, status: number, seconds: number): void {
    const label = METHODS.has(method) ? method : "other";
    let statuses = this.requests.get(label);
    if (statuses === undefined) {
      this.requests.set(label, statuses = new Map());
    }
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    let bucket = 0;
    for (const bound of DURATION_BUCKETS) {
      if (seconds <= bound) break;
      bucket++;
    }
    this.buckets[bucket]! += 1;
    this.sum += seconds;
    this.count++;
  }
}

const label = (value: string) =>
  value.replace(/[\\"\n]/g, (c) => c === "\n" ? "\\n" : `\\${c}`);

/** Prometheus reads `+Inf` and plain decimals. */
const value = (n: number) => Number.isFinite(n) ? String(n) : "+Inf";

/** Requests by route, method and status, their durations, and values sampled when scraped. */
export class Metrics {
  #routes = new Map<string, RouteStats>();
  #unknown = new RouteStats();
  #sampled: Parameters<Metrics["sample"]>[] = [];

  /** Any path not in `paths` is counted as {@linkcode UNKNOWN_ROUTE}. */
  track(paths: Iterable<string>): void {
    for (const path of paths) this.#routes.set(path, new RouteStats());
  }

  observe(req: Request, status: number, seconds: number): void {
    (this.#routes.get(requestPath(req)) ?? this.#unknown).add(
      req.method,
      status,
      seconds,
    );
  }

  /** A read that fails or answers `undefined` is left out of that scrape. */
  sample(
    name: string,
    help: string,
    type: "gauge" | "counter",
    read: () => Awaitable<number | undefined>,
  ): void {
    this.#sampled.push([name, help, type, read]);
  }

  async render(): Promise<string> {
    const lines: string[] = [];
    const routes: [string, RouteStats][] = [
      ...this.#routes,
      [UNKNOWN_ROUTE, this.#unknown],
    ];
    lines.push(
      "# HELP lms_http_requests_total Requests answered, by route, method and status.",
      "# TYPE lms_http_requests_total counter",
    );
    for (const [route, stats] of routes) {
      for (const [method, statuses] of stats.requests) {
        for (const [status, count] of statuses) {
          lines.push(
            `lms_http_requests_total{route="${
              label(route)
            }",method="${method}",status="${status}"} ${count}`,
          );
        }
      }
    }
    lines.push(
      "# HELP lms_http_request_duration_seconds Time from a request's arrival to its answer (an event stream's: to its headers), by route.",
      "# TYPE lms_http_request_duration_seconds histogram",
    );
    for (const [route, stats] of routes) {
      const name = `route="${label(route)}"`;
      let cumulative = 0;
      stats.buckets.forEach((count, i) => {
        const le = DURATION_BUCKETS[i] ?? Infinity;
        cumulative += count;
        lines.push(
          `lms_http_request_duration_seconds_bucket{${name},le="${
            value(le)
          }"} ${cumulative}`,
        );
      });
      lines.push(
        `lms_http_request_duration_seconds_sum{${name}} ${stats.sum}`,
        `lms_http_request_duration_seconds_count{${name}} ${stats.count}`,
      );
    }
    const sampled = await Promise.all(
      this.#sampled.map(async ([name, help, type, read]) => {
        try {
          const sample = await read();
          if (sample !== undefined) {
            return [
              `# HELP ${name} ${help}`,
              `# TYPE ${name} ${type}`,
              `${name} ${value(sample)}`,
            ];
          }
        } catch {
          // Left out of this scrape.
        }
        return [];
      }),
    );
    lines.push(...sampled.flat());
    return lines.join("\n") + "\n";
  }
}
