/**
 * The open event streams of one process: each is a `ReadableStream` that a
 * `Response` carries, and the hub writes encoded events to them. It bounds
 * how many are open and how many bytes may wait for one slow reader, sends
 * heartbeats on quiet streams, releases a stream the moment its reader
 * leaves, and ends them all when the server stops.
 * @module
 */

import { HEARTBEAT } from "./event_stream_format.ts";
import { UNKNOWN_CLIENT } from "../http/client_address.ts";

/**
 * What an ended stream fails with: Deno reports it to the server's
 * `onError`, which should pass over it, since it is no fault.
 */
export class StreamEnded extends Error {
  /** The reason, for the log of whoever looks. */
  constructor(reason: string) {
    super(reason);
    this.name = "StreamEnded";
  }
}

/** Limits of a {@linkcode StreamHub}. */
export interface StreamHubOptions {
  /** How many streams may be open at once. */
  maxStreams: number;
  /** How many streams one client may have open at once. Default: as many as `maxStreams`. */
  maxStreamsPerClient?: number;
  /** After this many milliseconds without an event, a stream gets a comment line. */
  heartbeatMs: number;
  /** Past this many bytes waiting for one reader, its stream is ended. Default 1 MiB. */
  maxQueuedBytes?: number;
  /** Aborted when the server begins to stop: every stream ends at once. */
  signal?: AbortSignal;
}

/** One open stream. */
export class EventStream {
  /** The body of the `Response`. */
  readonly body: ReadableStream<Uint8Array>;
  /** The id of the last message sent, so no message goes out twice. */
  lastId = 0;
  /** Who reads it, as the hub counts clients. */
  readonly client: string;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #hub: StreamHub;
  #lastWrite = performance.now();
  #open = true;
  /** Events that arrived while the stream was catching up, delivered after it. */
  #held: { id: number; chunk: Uint8Array }[] | undefined = [];
  /** Told once, when the stream ends or its reader leaves. */
  #onEnd: (() => void) | undefined;

  /** Opens a stream of `client` in `hub`; held (catching up) until {@linkcode EventStream.live}. */
  constructor(hub: StreamHub, client: string) {
    this.#hub = hub;
    this.client = client;
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      cancel: () => this.#release(),
      // desiredSize then goes down by the bytes waiting for the reader.
    }, new ByteLengthQueuingStrategy({ highWaterMark: 0 }));
  }

  /** Has `listener` told once, when the stream ends or its reader leaves (one listener; a second replaces it). */
  whenEnded(listener: () => void): void {
    this.#onEnd = listener;
  }

  /** Whether the stream is still open: not ended, and its reader still there. */
  get open(): boolean {
    return this.#open;
  }

  /** Writes `chunk` now, or ends the stream when its reader is too far behind. */
  write(chunk: Uint8Array): void {
    if (!this.#open) return;
    this.#controller.enqueue(chunk);
    this.#lastWrite = performance.now();
    if (-(this.#controller.desiredSize ?? 0) > this.#hub.maxQueuedBytes) {
      // Erroring drops what is queued; a close would wait for a reader that
      // never comes. The reader may reconnect and catch up.
      this.end(true);
    }
  }

  /** Delivers a message event (once, in id order), or holds it while catching up. */
  deliver(id: number, chunk: Uint8Array): void {
    if (this.#held) this.#held.push({ id, chunk });
    else if (id > this.lastId) {
      this.lastId = id;
      this.write(chunk);
    }
  }

  /** Delivers an event without an id (the quote). */
  deliverLatest(chunk: Uint8Array): void {
    if (this.#held) this.#held.push({ id: 0, chunk });
    else this.write(chunk);
  }

  /** Ends catching up: what arrived meanwhile goes out, without repeats. */
  live(): void {
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const { id, chunk } of held) {
      if (id === 0) this.write(chunk);
      else this.deliver(id, chunk);
    }
  }

  /** Sends a heartbeat when nothing was written for `quietMs`. */
  heartbeat(now: number, quietMs: number): void {
    if (now - this.#lastWrite >= quietMs) this.write(HEARTBEAT);
  }

  /** Ends the stream: at once (dropping what is queued) when `abort`, else after what is queued. */
  end(abort = false): void {
    if (!this.#open) return;
    const waiting = -(this.#controller.desiredSize ?? 0) > 0;
    try {
      if (abort || waiting) {
        this.#controller.error(new StreamEnded("the stream was ended"));
      } else this.#controller.close();
    } catch {
      // Already closed by its reader.
    }
    this.#release();
  }

  #release(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#hub.release(this);
    this.#onEnd?.();
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
export type StreamRefusal = "full" | "client-full";

/** The open streams of a process, by topic. */
export class StreamHub {
  /** Past this many bytes waiting for one reader, its stream is ended. */
  readonly maxQueuedBytes: number;
  readonly #maxStreams: number;
  readonly #maxPerClient: number;
  /** Open streams by client; a client with none has no entry. */
  #perClient = new Map<string, number>();
  readonly #heartbeatMs: number;
  #topics = new Map<string, Set<EventStream>>();
  #topicOf = new Map<EventStream, string>();
  #feeds = new Map<string, Feed>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #stopped = false;

  /** A hub with these limits. */
  constructor(options: StreamHubOptions) {
    this.#maxStreams = options.maxStreams;
    this.#maxPerClient = options.maxStreamsPerClient ?? options.maxStreams;
    this.#heartbeatMs = options.heartbeatMs;
    this.maxQueuedBytes = options.maxQueuedBytes ?? 1024 * 1024;
    options.signal?.addEventListener("abort", () => this.stop(), {
      once: true,
    });
  }

  /** How many streams are open. */
  get size(): number {
    return this.#topicOf.size;
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

  /** Opens a stream of `client` on `topic`, or says why not: a cap is reached, or the hub stopped. */
  open(topic: string, client: string): EventStream | StreamRefusal {
    if (this.#stopped || this.size >= this.#maxStreams) return "full";
    const clientStreams = this.#perClient.get(client) ?? 0;
    // A handler called without the connection cannot tell its clients
    // apart: holding them all to one client's share would refuse strangers.
    if (clientStreams >= this.#maxPerClient && client !== UNKNOWN_CLIENT) {
      return "client-full";
    }
    this.#perClient.set(client, clientStreams + 1);
    let readers = this.#topics.get(topic);
    if (readers === undefined) this.#topics.set(topic, readers = new Set());
    if (readers.size === 0) {
      const feed = this.#feeds.get(topic);
      if (feed !== undefined) feed.stop = feed.start();
    }
    const stream = new EventStream(this, client);
    readers.add(stream);
    this.#topicOf.set(stream, topic);
    // The heartbeat timer runs only while streams are open, so an idle
    // process does not wake for nothing.
    this.#timer ??= setInterval(
      () => this.#beat(),
      Math.max(10, Math.min(1000, this.#heartbeatMs / 4)),
    );
    return stream;
  }

  /** Forgets `stream`; called when it ends or its reader leaves. */
  release(stream: EventStream): void {
    const topic = this.#topicOf.get(stream);
    if (topic === undefined) return;
    const readers = this.#topics.get(topic)!;
    readers.delete(stream);
    this.#topicOf.delete(stream);
    const feed = this.#feeds.get(topic);
    if (readers.size === 0 && feed !== undefined) {
      feed.stop?.();
      feed.stop = undefined;
    }
    const left = this.#perClient.get(stream.client)! - 1;
    if (left === 0) this.#perClient.delete(stream.client);
    else this.#perClient.set(stream.client, left);
    if (this.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /** Ends every stream of `topic` (its readers reconnect and catch up). */
  endAll(topic?: string): void {
    const streams = topic === undefined
      ? [...this.#topicOf.keys()]
      : [...this.readers(topic)];
    for (const stream of streams) stream.end();
  }

  /** Ends every stream and refuses new ones. */
  stop(): void {
    this.#stopped = true;
    this.endAll();
  }

  #beat(): void {
    const now = performance.now();
    for (const stream of [...this.#topicOf.keys()]) {
      stream.heartbeat(now, this.#heartbeatMs);
    }
  }
}
