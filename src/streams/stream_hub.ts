/**
 * Each reader of the process gets each event once, in id order, within caps (docs/architecture.md, "Stream hub").
 * @module
 */

import type { StreamEvent } from "./event_stream_format.ts";
import type { EndReason, Transport, TransportFactory } from "./transport.ts";
import { UNKNOWN_CLIENT } from "../http/client_address.ts";
import { type BudgetShare, StreamBudget } from "./stream_budget.ts";

export interface StreamHubOptions {
  maxStreams: number;
  maxStreamsPerClient?: number;
  /** Apart from `maxStreamsPerClient`: Deno holds a client's frame whole (up to 64 MiB). */
  maxWebSocketsPerClient?: number;
  heartbeatMs: number;
  /** Default 1 MiB. */
  maxQueuedBytes?: number;
  /** Default 64 MiB; past it, the readers furthest behind are ended first. */
  maxTotalQueuedBytes?: number;
  signal?: AbortSignal;
}

/** One open stream: what its reader has been sent, over its transport. */
export class EventStream<T extends Transport = Transport> {
  readonly transport: T;
  /** So no message goes out twice. */
  lastId = 0;
  readonly client: string;
  /** Unregistering them ends the stream. */
  reader: string | undefined;
  readonly places: readonly string[];
  #hub: StreamHub;
  #share: BudgetShare;
  #lastWrite = performance.now();
  #open = true;
  /** Until its connection is gone, the stream holds its places under the caps. */
  #connected: boolean;
  /** Left waiting by the catch-up, allowed above the one-reader bound (five big messages may pass it). */
  #catchUpBytes = 0;
  #endedFor: EndReason | undefined;
  #held: StreamEvent[] | undefined = [];
  #onEnd: (() => void) | undefined;

  /** Held (catching up) until {@linkcode EventStream.live}; holds its places until `connection` settles. */
  constructor(
    hub: StreamHub,
    client: string,
    transport: TransportFactory<T>,
    connection?: Promise<unknown>,
    places: readonly string[] = [client],
  ) {
    this.#hub = hub;
    this.client = client;
    this.places = places;
    this.#share = hub.budget.share(
      () => this.transport.queuedBytes,
      () => this.end("overflow"),
    );
    try {
      this.transport = transport(() => this.#release(), this.#share);
    } catch (error) {
      this.#share.close();
      throw error;
    }
    this.#connected = connection !== undefined;
    const gone = () => this.#disconnect();
    connection?.then(gone, gone);
  }

  /** One listener; a second replaces it. */
  whenEnded(listener: () => void): void {
    this.#onEnd = listener;
  }

  get open(): boolean {
    return this.#open;
  }

  get endedFor(): EndReason | undefined {
    return this.#endedFor;
  }

  get connected(): boolean {
    return this.#connected;
  }

  write(event: StreamEvent): void {
    if (!this.#open) return;
    this.transport.send(event);
    this.#wrote();
  }

  #wrote(): void {
    this.#lastWrite = performance.now();
    // Holding its chunks may have cut this stream past the total already.
    if (!this.#open) return;
    // Read once: on a WebSocket it is a call into Deno. Nothing waiting, nothing to measure.
    const queued = this.transport.queuedBytes;
    if (
      this.#held === undefined &&
      queued > this.#hub.maxQueuedBytes + this.#catchUpBytes
    ) {
      this.end("overflow");
    } else if (queued > 0 || this.#share.waiting) this.#share.measure(queued);
  }

  /** Once, in id order; held while catching up. */
  deliver(event: StreamEvent): void {
    if (this.#held) this.#held.push(event);
    else if (event.id === undefined) this.write(event);
    else if (event.id > this.lastId) {
      this.lastId = event.id;
      this.write(event);
    }
  }

  live(): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    this.#catchUpBytes = this.transport.queuedBytes;
    for (const event of held) this.deliver(event);
  }

  /** Re-measures what a WebSocket drained unseen, only where something waited (scale.md). */
  heartbeat(now: number, quietMs: number): void {
    if (this.#share.waiting) this.#share.measure();
    if (!this.#open) return;
    const quiet = now - this.#lastWrite >= quietMs;
    this.transport.beat(now, quiet);
    if (quiet) this.#wrote();
  }

  end(reason: EndReason = "reconnect"): void {
    if (!this.#open) return;
    this.#endedFor = reason;
    this.transport.close(reason);
    this.#release();
  }

  #release(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#share.close();
    this.#hub.release(this);
    this.#onEnd?.();
  }

  #disconnect(): void {
    this.#release();
    if (!this.#connected) return;
    this.#connected = false;
    this.#hub.disconnect(this);
  }
}

interface Feed {
  start: () => () => void;
  stop?: () => void;
}

export type StreamRefusal = "full" | "client-full" | "client-websockets-full";

export type StreamKind = "events" | "websocket";

const webSocketPlace = (client: string) => `websocket ${client}`;

export class StreamHub {
  readonly maxQueuedBytes: number;
  readonly budget: StreamBudget;
  readonly #maxStreams: number;
  readonly #maxPerClient: number;
  readonly #maxWebSocketsPerClient: number;
  /** Places held under the per-client caps, by open or still-connected streams. */
  #places = new Map<string, number>();
  #closing = new Set<EventStream>();
  readonly heartbeatMs: number;
  #topics = new Map<string, Set<EventStream>>();
  #topicOf = new Map<EventStream, string>();
  #feeds = new Map<string, Feed>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #stopped = false;

  constructor(options: StreamHubOptions) {
    this.#maxStreams = options.maxStreams;
    this.#maxPerClient = options.maxStreamsPerClient ?? options.maxStreams;
    this.#maxWebSocketsPerClient = options.maxWebSocketsPerClient ??
      this.#maxPerClient;
    this.heartbeatMs = options.heartbeatMs;
    this.maxQueuedBytes = options.maxQueuedBytes ?? 1024 * 1024;
    this.budget = new StreamBudget(
      options.maxTotalQueuedBytes ?? 64 * 1024 * 1024,
    );
    options.signal?.addEventListener("abort", () => this.stop(), {
      once: true,
    });
  }

  get size(): number {
    return this.#topicOf.size;
  }

  /** Ended streams whose client has not closed the connection: they still count against the caps. */
  get closing(): number {
    return this.#closing.size;
  }

  readers(topic: string): Iterable<EventStream> {
    return this.#topics.get(topic) ?? [];
  }

  /** One event object for all readers of `topic`, encoded once per transport. */
  deliver(topic: string, event: () => StreamEvent): void {
    let made: StreamEvent | undefined;
    for (const stream of this.readers(topic)) stream.deliver(made ??= event());
  }

  /** `start` runs while `topic` has readers, so a handler nobody follows holds no subscription. */
  feed(topic: string, start: () => () => void): void {
    this.#feeds.get(topic)?.stop?.();
    const feed: Feed = { start };
    if ((this.#topics.get(topic)?.size ?? 0) > 0) feed.stop = start();
    this.#feeds.set(topic, feed);
  }

  /** Why a stream of `client` would be refused now, if it would. */
  refusal(client: string, kind: StreamKind): StreamRefusal | undefined {
    if (this.#stopped || this.size + this.closing >= this.#maxStreams) {
      return "full";
    }
    // Without the connection clients cannot be told apart: one share would refuse strangers.
    if (client === UNKNOWN_CLIENT) return undefined;
    if (this.#held(client) >= this.#maxPerClient) return "client-full";
    if (
      kind === "websocket" &&
      this.#held(webSocketPlace(client)) >= this.#maxWebSocketsPerClient
    ) return "client-websockets-full";
    return undefined;
  }

  /** The transport is built only once the caps allow it and before counting, so a throw changes nothing. */
  open<T extends Transport>(
    topic: string,
    client: string,
    transport: TransportFactory<T>,
    connection?: Promise<unknown>,
    kind: StreamKind = "events",
  ): EventStream<T> | StreamRefusal {
    const refused = this.refusal(client, kind);
    if (refused !== undefined) return refused;
    const places = kind === "websocket"
      ? [client, webSocketPlace(client)]
      : [client];
    const stream = new EventStream(this, client, transport, connection, places);
    for (const place of places) this.#places.set(place, this.#held(place) + 1);
    let readers = this.#topics.get(topic);
    if (readers === undefined) this.#topics.set(topic, readers = new Set());
    if (readers.size === 0) {
      const feed = this.#feeds.get(topic);
      if (feed !== undefined) feed.stop = feed.start();
    }
    readers.add(stream);
    this.#topicOf.set(stream, topic);
    // Only while streams are open, so an idle process does not wake.
    this.#timer ??= setInterval(
      () => this.#beat(),
      Math.max(10, Math.min(1000, this.heartbeatMs / 4)),
    );
    return stream;
  }

  release(stream: EventStream): void {
    const topic = this.#topicOf.get(stream);
    if (topic === undefined) return;
    const readers = this.#topics.get(topic);
    readers?.delete(stream);
    this.#topicOf.delete(stream);
    const feed = this.#feeds.get(topic);
    if (readers?.size === 0 && feed !== undefined) {
      feed.stop?.();
      feed.stop = undefined;
    }
    if (stream.connected) this.#closing.add(stream);
    else this.#free(stream);
    if (this.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  disconnect(stream: EventStream): void {
    if (this.#closing.delete(stream)) this.#free(stream);
  }

  #held(place: string): number {
    return this.#places.get(place) ?? 0;
  }

  #free(stream: EventStream): void {
    for (const place of stream.places) {
      const left = this.#held(place) - 1;
      if (left <= 0) this.#places.delete(place);
      else this.#places.set(place, left);
    }
  }

  endReader(topic: string, reader: string, reason: EndReason): void {
    for (const stream of [...this.readers(topic)]) {
      if (stream.reader === reader) stream.end(reason);
    }
  }

  endAll(topic: string): void {
    for (const stream of [...this.readers(topic)]) stream.end();
  }

  stop(): void {
    this.#stopped = true;
    for (const stream of [...this.#topicOf.keys()]) stream.end("stopping");
  }

  #beat(): void {
    const now = performance.now();
    // Not copied: a stream a heartbeat ends leaves the map, which iteration allows.
    for (const stream of this.#topicOf.keys()) {
      stream.heartbeat(now, this.heartbeatMs);
    }
  }
}
