/**
 * The open event streams of one process, whatever carries them (an event
 * stream or a WebSocket, see {@linkcode Transport}): the hub decides what
 * each reader gets, in id order and once. It bounds how many are open
 * (every transport counted together) and how many bytes may wait for one
 * slow reader and for all of them together, sends heartbeats on quiet streams, releases a stream the
 * moment its reader leaves, and ends them all when the server stops. An
 * ended stream keeps its places under the caps until its connection is
 * gone: a reader that never reads keeps its connection open after its
 * stream is cut (Deno goes on trying to deliver what it holds), so a
 * client that keeps getting cut must not open more connections than its
 * share.
 * @module
 */

import type { StreamEvent } from "./event_stream_format.ts";
import type { EndReason, Transport, TransportFactory } from "./transport.ts";
import { UNKNOWN_CLIENT } from "../http/client_address.ts";
import { type BudgetShare, StreamBudget } from "./stream_budget.ts";

/** Limits of a {@linkcode StreamHub}. */
export interface StreamHubOptions {
  /** How many streams may be open at once. */
  maxStreams: number;
  /** How many streams one client may have open at once. Default: as many as `maxStreams`. */
  maxStreamsPerClient?: number;
  /**
   * How many of those may be WebSockets: Deno holds a client's frame whole
   * (up to 64 MiB) before the program sees it. Default: as many as streams.
   */
  maxWebSocketsPerClient?: number;
  /** After this many milliseconds without an event, a stream gets a heartbeat. */
  heartbeatMs: number;
  /** Past this many bytes waiting for one reader, its stream is ended. Default 1 MiB. */
  maxQueuedBytes?: number;
  /**
   * Past this many bytes waiting for all readers together (a chunk many
   * hold counted once), the readers furthest behind are ended first.
   * Default 64 MiB.
   */
  maxTotalQueuedBytes?: number;
  /** Aborted when the server begins to stop: every stream ends at once. */
  signal?: AbortSignal;
}

/** One open stream: what its reader has been sent, over its transport. */
export class EventStream<T extends Transport = Transport> {
  /** The connection the events go out on. */
  readonly transport: T;
  /** The id of the last message sent, so no message goes out twice. */
  lastId = 0;
  /** Who reads it, as the hub counts clients. */
  readonly client: string;
  /** The user it is authenticated as, if any: unregistering them ends it. */
  reader: string | undefined;
  /** The places it holds under the per-client caps, freed together. */
  readonly places: readonly string[];
  #hub: StreamHub;
  #share: BudgetShare;
  #lastWrite = performance.now();
  #open = true;
  /** Until its connection is gone, the stream holds its places under the caps. */
  #connected = true;
  /**
   * What the catch-up left waiting when the stream went live, allowed on top
   * of the bound for one reader: a catch-up is written before the reader
   * can take any of it, and five messages at a raised `--max-body-bytes` may
   * pass the bound by themselves. They are the newest messages, whose bytes
   * every reader shares, and the total bound still counts them.
   */
  #catchUpBytes = 0;
  /** Why the server ended the stream, if it did. */
  #endedFor: EndReason | undefined;
  /** Events that arrived while the stream was catching up, delivered after it. */
  #held: StreamEvent[] | undefined = [];
  /** Told once, when the stream ends or its reader leaves. */
  #onEnd: (() => void) | undefined;

  /**
   * Opens a stream of `client` in `hub`; held (catching up) until
   * {@linkcode EventStream.live}. Its places under the caps are held until
   * `connection` settles (the connection is gone), or without it until the
   * stream ends.
   */
  constructor(
    hub: StreamHub,
    client: string,
    transport: TransportFactory<T>,
    connection?: Promise<unknown>,
    places: readonly string[] = [client],
  ) {
    this.#hub = hub;
    this.client = client;
    this.reader = undefined;
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
    if (connection === undefined) this.#connected = false;
    else {
      const gone = () => this.#disconnect();
      connection.then(gone, gone);
    }
  }

  /** Has `listener` told once, when the stream ends or its reader leaves (one listener; a second replaces it). */
  whenEnded(listener: () => void): void {
    this.#onEnd = listener;
  }

  /** Whether the stream is still open: not ended, and its reader still there. */
  get open(): boolean {
    return this.#open;
  }

  /** Why the server ended the stream; `undefined` while open, or when its reader left. */
  get endedFor(): EndReason | undefined {
    return this.#endedFor;
  }

  /** Whether the stream, ended or not, still holds its places under the caps: its connection is not gone yet. */
  get connected(): boolean {
    return this.#connected;
  }

  /** Sends `event` now, or ends the stream when its reader is too far behind. */
  write(event: StreamEvent): void {
    if (!this.#open) return;
    this.transport.send(event);
    this.#wrote();
  }

  #wrote(): void {
    this.#lastWrite = performance.now();
    // Holding its chunks may have cut this stream past the total already.
    if (!this.#open) return;
    if (
      this.#held === undefined &&
      this.transport.queuedBytes > this.#hub.maxQueuedBytes + this.#catchUpBytes
    ) {
      this.end("overflow");
    } else this.#share.measure();
  }

  /** Delivers a message event (once, in id order), or holds it while catching up. */
  deliver(event: StreamEvent): void {
    if (this.#held) this.#held.push(event);
    else if (event.id === undefined) this.write(event);
    else if (event.id > this.lastId) {
      this.lastId = event.id;
      this.write(event);
    }
  }

  /** Ends catching up: what arrived meanwhile goes out, without repeats. */
  live(): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    this.#catchUpBytes = this.transport.queuedBytes;
    for (const event of held) this.deliver(event);
  }

  /**
   * Sends a heartbeat when nothing was written for `quietMs`; either way
   * reads again what waits, which a WebSocket drains unseen.
   */
  heartbeat(now: number, quietMs: number): void {
    this.#share.measure();
    if (!this.#open || now - this.#lastWrite < quietMs) return;
    this.transport.heartbeat();
    this.#wrote();
  }

  /** Ends the stream for `reason` (by default: so that its reader reconnects). */
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

  /** The connection is gone: the stream ends, if it had not, and gives its places back. */
  #disconnect(): void {
    this.#release();
    if (!this.#connected) return;
    this.#connected = false;
    this.#hub.disconnect(this);
  }
}

/** What feeds a topic, and how to stop it while the topic has readers. */
interface Feed {
  start: () => () => void;
  stop?: () => void;
}

/**
 * Why {@linkcode StreamHub.open} refused a stream: the process holds as
 * many as it may (or is stopping), or the client does.
 */
export type StreamRefusal = "full" | "client-full" | "client-websockets-full";

/** What carries a stream, for the per-client caps. */
export type StreamKind = "events" | "websocket";

/** The place a client's WebSockets are counted under, apart from its streams. */
const webSocketPlace = (client: string) => `websocket ${client}`;

/** The open streams of a process, by topic. */
export class StreamHub {
  /** Past this many bytes waiting for one reader, its stream is ended. */
  readonly maxQueuedBytes: number;
  /** The bytes waiting for all readers, against one bound. */
  readonly budget: StreamBudget;
  readonly #maxStreams: number;
  readonly #maxPerClient: number;
  readonly #maxWebSocketsPerClient: number;
  /**
   * Places held (by open streams, or ended but still connected ones) under
   * the per-client caps: a client's streams under its address, its
   * WebSockets under {@linkcode webSocketPlace}. No entry: none held.
   */
  #places = new Map<string, number>();
  /** Ended streams whose connection is not gone yet: they still hold their places. */
  #closing = new Set<EventStream>();
  /** After this many milliseconds without an event, a stream gets a heartbeat. */
  readonly heartbeatMs: number;
  #topics = new Map<string, Set<EventStream>>();
  #topicOf = new Map<EventStream, string>();
  #feeds = new Map<string, Feed>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #stopped = false;

  /** A hub with these limits. */
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

  /** How many streams are open. */
  get size(): number {
    return this.#topicOf.size;
  }

  /**
   * How many streams have ended but not yet lost their connection (their
   * client has not closed it): they count against the caps as open ones do.
   */
  get closing(): number {
    return this.#closing.size;
  }

  /** The streams of `topic`. */
  readers(topic: string): Iterable<EventStream> {
    return this.#topics.get(topic) ?? [];
  }

  /**
   * Feeds `topic` only while it has readers: `start` is called when its
   * first stream opens and what `start` answers when its last one ends. So a
   * handler nobody follows holds no subscription to the store, however many
   * handlers are built over it, and a write with no reader tells no one.
   * One feed per topic; a second replaces the first.
   */
  feed(topic: string, start: () => () => void): void {
    this.#feeds.get(topic)?.stop?.();
    const feed: Feed = { start };
    if ((this.#topics.get(topic)?.size ?? 0) > 0) feed.stop = start();
    this.#feeds.set(topic, feed);
  }

  /**
   * Opens a stream of `client` on `topic` over what `transport` builds, or
   * says why not: a cap is reached, or the hub stopped. The transport is
   * built only once the caps allow it, and before anything is counted, so
   * a transport that cannot be built (it throws) leaves the hub as it was.
   * The stream holds its places under the caps until `connection` settles
   * (its connection is gone), even once ended; without it, until it ends.
   */
  open<T extends Transport>(
    topic: string,
    client: string,
    transport: TransportFactory<T>,
    connection?: Promise<unknown>,
    kind: StreamKind = "events",
  ): EventStream<T> | StreamRefusal {
    if (this.#stopped || this.size + this.closing >= this.#maxStreams) {
      return "full";
    }
    const places = kind === "websocket"
      ? [client, webSocketPlace(client)]
      : [client];
    // A handler called without the connection cannot tell its clients
    // apart: holding them all to one client's share would refuse strangers.
    if (client !== UNKNOWN_CLIENT) {
      if (this.#held(client) >= this.#maxPerClient) return "client-full";
      if (
        kind === "websocket" &&
        this.#held(webSocketPlace(client)) >= this.#maxWebSocketsPerClient
      ) return "client-websockets-full";
    }
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
    // The heartbeat timer runs only while streams are open, so an idle
    // process does not wake for nothing.
    this.#timer ??= setInterval(
      () => this.#beat(),
      Math.max(10, Math.min(1000, this.heartbeatMs / 4)),
    );
    return stream;
  }

  /**
   * Takes `stream` off its topic; called when it ends or its reader leaves.
   * Its places stay taken while it is still connected.
   */
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

  /** Gives back the places of `stream`, ended, whose connection is gone. */
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

  /** Ends the streams of `topic` authenticated as `reader`. */
  endReader(topic: string, reader: string, reason: EndReason): void {
    for (const stream of [...this.readers(topic)]) {
      if (stream.reader === reader) stream.end(reason);
    }
  }

  /** Ends every stream of `topic` (its readers reconnect and catch up). */
  endAll(topic?: string, reason: EndReason = "reconnect"): void {
    const streams = topic === undefined
      ? [...this.#topicOf.keys()]
      : [...this.readers(topic)];
    for (const stream of streams) stream.end(reason);
  }

  /** Ends every stream and refuses new ones. */
  stop(): void {
    this.#stopped = true;
    this.endAll(undefined, "stopping");
  }

  #beat(): void {
    const now = performance.now();
    for (const stream of [...this.#topicOf.keys()]) {
      stream.heartbeat(now, this.heartbeatMs);
    }
  }
}
