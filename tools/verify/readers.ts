/**
 * Readers that follow an event stream the way a browser's `EventSource`
 * does: parse with a real parser, remember the last event id, and when the
 * stream ends or fails, wait the `retry` the server sent and reconnect with
 * `Last-Event-ID`. Unlike `EventSource`, which gives up on any status but
 * 200, a refusal (503, 429) is counted and retried after a short pause, as a
 * careful client would. Each reader logs every connection and what it
 * carried, for reconciliation.
 * @module
 */

import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { ConnectionLog, ReaderLog } from "./reconcile.ts";

/** `EventSource`'s wait before reconnecting until the server says otherwise. */
const DEFAULT_RETRY_MS = 1000;
/** The longest a refused reader waits, whatever `Retry-After` says. */
const MAX_REFUSAL_PAUSE_MS = 3000;
/** Bounds a reader's reconnections, so a service that ends every stream at once cannot spin it forever. */
const MAX_CONNECTIONS = 5000;

/** A stream follower started by {@linkcode followMessages} or {@linkcode followQuotes}. */
export interface Follower {
  /** Resolves when a message (or quote) with this text has arrived, or after `timeoutMs` with false. */
  waitFor(text: string, timeoutMs: number): Promise<boolean>;
  /** Whether the first connection has been answered. */
  readonly started: boolean;
  /** Stops following and resolves once the last connection is closed. */
  stop(): Promise<void>;
}

interface Follow {
  url: string;
  /** Called for each event with the connection that carried it; returns its text, if it has one. */
  onEvent: (
    event: EventSourceMessage,
    connection: ConnectionLog,
  ) => string | undefined;
  /** Whether to send `Last-Event-ID` when reconnecting. */
  resume: boolean;
  log: ConnectionLog[];
}

function follow({ url, onEvent, resume, log }: Follow): Follower {
  const stopping = new AbortController();
  const texts = new Set<string>();
  let waiters: (() => void)[] = [];
  let started = false;
  let retryMs = DEFAULT_RETRY_MS;
  let lastId: string | undefined;
  let lastText: string | undefined;
  let cancel = () => {};
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      stopping.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });

  const connectOnce = async () => {
    const c: ConnectionLog = { items: [] };
    if (resume && lastId) {
      c.resumeFrom = { id: Number(lastId), text: lastText };
    }
    log.push(c);
    let response: Response;
    try {
      response = await fetch(url, {
        headers: {
          accept: "text/event-stream",
          ...(c.resumeFrom ? { "last-event-id": lastId } : {}),
        },
        signal: stopping.signal,
      });
    } catch {
      c.endedAt = performance.now();
      started = true;
      return retryMs;
    }
    c.status = response.status;
    c.headersAt = performance.now();
    started = true;
    if (response.status !== 200 || !response.body) {
      await response.body?.cancel();
      c.endedAt = performance.now();
      const after = Number(response.headers.get("retry-after"));
      return after > 0
        ? Math.min(after * 1000, MAX_REFUSAL_PAUSE_MS)
        : DEFAULT_RETRY_MS;
    }
    const parser = createParser({
      onRetry: (ms) => void (retryMs = ms),
      onEvent: (event) => {
        if (event.id !== undefined) lastId = event.id;
        const text = onEvent(event, c);
        if (event.id !== undefined) lastText = text;
        if (text === undefined) return;
        texts.add(text);
        const woken = waiters;
        waiters = [];
        for (const wake of woken) wake();
      },
    });
    const reader = response.body.pipeThrough(new TextDecoderStream())
      .getReader();
    // Cancelled by stop() as well as by the abort: a body already being
    // read must not keep the reader waiting for the server.
    cancel = () => void reader.cancel().catch(() => {});
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
    } catch {
      // A stream cut off (or stopped by us) ends like one closed.
    }
    cancel = () => {};
    c.endedAt = performance.now();
    return retryMs;
  };

  const done = (async () => {
    for (let n = 0; n < MAX_CONNECTIONS && !stopping.signal.aborted; n++) {
      await pause(await connectOnce());
    }
  })();

  return {
    get started() {
      return started;
    },
    async waitFor(text, timeoutMs) {
      const deadline = performance.now() + timeoutMs;
      while (!texts.has(text)) {
        const left = deadline - performance.now();
        if (left <= 0) return false;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return true;
    },
    async stop() {
      stopping.abort();
      cancel();
      await done;
    },
  };
}

/**
 * Follows `GET /events` of the service at `baseUrl`, logging into `log`.
 *
 * @example One reader
 * ```ts ignore
 * const log: ReaderLog = { name: "p0r0", connections: [] };
 * const reader = followMessages("http://127.0.0.1:8000/", log);
 * await reader.waitFor("the last message", 10_000);
 * await reader.stop();
 * ```
 */
export function followMessages(baseUrl: string, log: ReaderLog): Follower {
  return follow({
    url: `${baseUrl}events`,
    resume: true,
    log: log.connections,
    onEvent(event, connection) {
      if (event.event === "gap") {
        connection.items.push({ kind: "gap", missed: missedOf(event.data) });
        return undefined;
      }
      if ((event.event ?? "message") !== "message") return undefined;
      const text = textOf(event.data);
      connection.items.push({ kind: "message", id: Number(event.id), text });
      return text;
    },
  });
}

/**
 * Follows `GET /quote/events` of the service at `baseUrl`, adding every
 * quote it carries to `seen`.
 *
 * @example Watching the quote
 * ```ts ignore
 * const seen: string[] = [];
 * const watcher = followQuotes("http://127.0.0.1:8000/", seen);
 * await watcher.stop();
 * ```
 */
export function followQuotes(baseUrl: string, seen: string[]): Follower {
  return follow({
    url: `${baseUrl}quote/events`,
    resume: false,
    log: [],
    onEvent(event) {
      if (event.event !== "quote") return undefined;
      const quote = String(JSON.parse(event.data));
      seen.push(quote);
      return quote;
    },
  });
}

/** A gap's count, or NaN when its data is not `{"missed": K}` (then it covers nothing). */
function missedOf(data: string): number {
  try {
    return Number(JSON.parse(data)?.missed);
  } catch {
    return NaN;
  }
}

/** A message's text, or its raw data when it is not a message as `GET /` shows one. */
function textOf(data: string): string {
  try {
    const text = JSON.parse(data)?.text;
    return typeof text === "string" ? text : data;
  } catch {
    return data;
  }
}
