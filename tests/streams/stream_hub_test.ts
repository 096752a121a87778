/**
 * The hub of open event streams on its own: caps, feeds that run only while
 * a topic has readers, catching up without repeats, slow readers,
 * heartbeats, and stopping.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { UNKNOWN_CLIENT } from "../../src/http/client_address.ts";
import {
  HEARTBEAT,
  RETRY,
  StreamEvent,
} from "../../src/streams/event_stream_format.ts";
import {
  EventStream,
  StreamHub,
  type StreamHubOptions,
  type StreamKind,
  type StreamRefusal,
} from "../../src/streams/stream_hub.ts";
import { SseTransport, StreamEnded } from "../../src/streams/sse_transport.ts";

/** An event whose encoding is `chunk` itself: the tests read back what they wrote. */
class Raw extends StreamEvent {
  #bytes: Uint8Array;
  constructor(chunk: string, id?: number) {
    super("raw", "null", id);
    this.#bytes = new TextEncoder().encode(chunk);
  }
  override get sse(): Uint8Array {
    return this.#bytes;
  }
}
const text = (chunk: string, id?: number) => new Raw(chunk, id);

/** A hub whose heartbeat never fires within a test, stopped after `fn`. */
async function withHub(
  options: Partial<StreamHubOptions>,
  fn: (hub: StreamHub) => Promise<void> | void,
): Promise<void> {
  const hub = new StreamHub({
    maxStreams: 100,
    heartbeatMs: 3_600_000,
    ...options,
  });
  try {
    await fn(hub);
  } finally {
    hub.stop();
  }
}

/**
 * Opens an event stream (SSE) of `client` on `topic`, holding its places
 * until `connection` settles when given, or says why not.
 */
function open(
  hub: StreamHub,
  topic: string,
  client: string,
  connection?: Promise<unknown>,
  kind?: StreamKind,
): EventStream<SseTransport> | StreamRefusal {
  return hub.open(
    topic,
    client,
    (gone, share) => new SseTransport(gone, share),
    connection,
    kind,
  );
}

/** An event stream whose `retry` line has been read, so that reads see only what the test writes. */
async function opened(
  hub: StreamHub,
  topic: string,
  client: string,
): Promise<EventStream<SseTransport>> {
  const stream = open(hub, topic, client);
  assert.ok(stream instanceof EventStream, `refused: ${stream}`);
  const reader = stream.transport.body.getReader();
  assert.deepEqual((await reader.read()).value, RETRY);
  reader.releaseLock();
  return stream;
}

/** Reads what waits, leaving its last read pending: Deno's server does, and the next write may go straight to it. */
class KeptReader {
  got = "";
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  constructor(stream: EventStream<SseTransport>, readonly waitMs = 20) {
    this.#reader = stream.transport.body.getReader();
  }

  /** What was taken by this call; each read takes one chunk, a read that would wait ends it. */
  async takeWaiting(): Promise<string> {
    let taken = "";
    for (let i = 0; i < 1000; i++) {
      const read = this.#pending ?? this.#reader.read();
      const next = await Promise.race([
        read,
        new Promise<"waiting">((r) =>
          setTimeout(() => r("waiting"), this.waitMs)
        ),
      ]);
      this.#pending = next === "waiting" ? read : undefined;
      if (next === "waiting" || next.done) break;
      taken += new TextDecoder().decode(next.value);
    }
    this.got += taken;
    return taken;
  }

  release(): void {
    this.#reader.releaseLock();
  }
}

/** Reads what `stream` holds now, as text, without waiting for more. */
async function queued(stream: EventStream<SseTransport>): Promise<string> {
  const reader = new KeptReader(stream);
  try {
    return await reader.takeWaiting();
  } finally {
    reader.release();
  }
}

Deno.test("past maxStreams the hub is full; a stream released makes room", async () => {
  await withHub({ maxStreams: 2 }, async (hub) => {
    const a = await opened(hub, "t", "c1");
    await opened(hub, "t", "c2");
    assert.equal(open(hub, "t", "c3"), "full");
    assert.equal(hub.size, 2);
    await a.transport.body.cancel();
    assert.equal(hub.size, 1);
    await opened(hub, "t", "c3");
  });
});

Deno.test("past maxStreamsPerClient that client is refused, others are not", async () => {
  await withHub({ maxStreamsPerClient: 2 }, async (hub) => {
    const first = await opened(hub, "t", "ann");
    await opened(hub, "u", "ann");
    assert.equal(open(hub, "t", "ann"), "client-full");
    await opened(hub, "t", "bob");
    await first.transport.body.cancel();
    await opened(hub, "t", "ann");
  });
});

Deno.test("past maxWebSocketsPerClient that client's WebSockets are refused, its other streams and other clients are not", async () => {
  await withHub(
    { maxStreamsPerClient: 4, maxWebSocketsPerClient: 2 },
    (hub) => {
      const sockets = [0, 1].map(() =>
        open(hub, "t", "ann", undefined, "websocket")
      );
      assert.ok(sockets.every((s) => s instanceof EventStream));
      assert.equal(
        open(hub, "t", "ann", undefined, "websocket"),
        "client-websockets-full",
      );
      assert.ok(open(hub, "t", "ann") instanceof EventStream);
      assert.ok(
        open(hub, "t", "bob", undefined, "websocket") instanceof EventStream,
      );
      (sockets[0] as EventStream).end();
      assert.ok(
        open(hub, "t", "ann", undefined, "websocket") instanceof EventStream,
      );
      // WebSockets count as streams too: with 2 sockets and 1 stream, the
      // client's share of 4 has one place left.
      assert.ok(open(hub, "t", "ann") instanceof EventStream);
      assert.equal(open(hub, "t", "ann"), "client-full");
      hub.stop();
    },
  );
});

Deno.test("endReader ends only the streams of that reader on that topic", async () => {
  await withHub({}, async (hub) => {
    const [a, b, c] = [
      await opened(hub, "t", "x"),
      await opened(hub, "t", "y"),
      await opened(hub, "u", "z"),
    ];
    a.reader = "ann";
    b.reader = "bob";
    c.reader = "ann";
    hub.endReader("t", "ann", "unregistered");
    assert.deepEqual([a.open, b.open, c.open], [false, true, true]);
    assert.equal(a.endedFor, "unregistered");
    hub.stop();
  });
});

Deno.test("a client whose streams all ended has its whole share again", async () => {
  await withHub({ maxStreamsPerClient: 1 }, async (hub) => {
    for (let i = 0; i < 3; i++) {
      const stream = await opened(hub, "t", "ann");
      assert.equal(open(hub, "u", "ann"), "client-full");
      if (i % 2 === 0) await stream.transport.body.cancel();
      else stream.end();
    }
    assert.equal(hub.size, 0);
  });
});

Deno.test("whenEnded is told once, after the hub let the stream go, however it ends", async () => {
  await withHub({}, async (hub) => {
    const ends = ["reader leaves", "ended", "aborted", "hub stops"];
    const told: string[] = [];
    const streams = [];
    for (const end of ends) {
      const stream = await opened(hub, "t", end);
      stream.whenEnded(() => told.push(`${end} ${hub.size}`));
      streams.push(stream);
    }
    await streams[0]!.transport.body.cancel();
    streams[1]!.end();
    streams[2]!.end("overflow");
    streams[1]!.end();
    hub.stop();
    assert.deepEqual(told, [
      "reader leaves 3",
      "ended 2",
      "aborted 1",
      "hub stops 0",
    ]);
  });
});

Deno.test("an ended stream holds its places under both caps until its connection is gone", async () => {
  await withHub({ maxStreams: 3, maxStreamsPerClient: 2 }, async (hub) => {
    const connection = Promise.withResolvers<void>();
    const cut = open(hub, "t", "ann", connection.promise);
    assert.ok(cut instanceof EventStream);
    assert.ok(open(hub, "t", "ann") instanceof EventStream);
    let told = 0;
    cut.whenEnded(() => told++);
    cut.end("overflow");
    assert.equal(told, 1, "its end is told at once");
    assert.equal(cut.open, false);
    assert.deepEqual([...hub.readers("t")].includes(cut), false);
    assert.deepEqual([hub.size, hub.closing], [1, 1]);
    assert.equal(open(hub, "t", "ann"), "client-full");
    assert.ok(open(hub, "t", "bob") instanceof EventStream);
    assert.equal(open(hub, "t", "cat"), "full");
    connection.resolve();
    await connection.promise;
    assert.deepEqual([hub.size, hub.closing], [2, 0]);
    assert.ok(open(hub, "t", "ann") instanceof EventStream);
  });
});

Deno.test("a connection gone while its stream is open ends the stream and frees its places at once", async () => {
  await withHub({ maxStreamsPerClient: 1 }, async (hub) => {
    const connection = Promise.withResolvers<void>();
    const stream = open(hub, "t", "ann", connection.promise);
    assert.ok(stream instanceof EventStream);
    let told = 0;
    stream.whenEnded(() => told++);
    // As Deno's `completed` does when the client left mid-answer.
    connection.reject(new Deno.errors.Interrupted("gone"));
    await connection.promise.catch(() => {});
    assert.equal(stream.open, false);
    assert.equal(told, 1);
    assert.deepEqual([hub.size, hub.closing], [0, 0]);
    assert.ok(open(hub, "t", "ann") instanceof EventStream);
  });
});

Deno.test("property: a client holds at most its share of connections, however its streams end and its connections go", async () => {
  const client = fc.constantFrom("ann", "bob");
  const step = fc.oneof(
    fc.record({
      kind: fc.constant("open" as const),
      client,
      held: fc.boolean(),
    }),
    fc.record({ kind: fc.constant("end" as const), at: fc.nat() }),
    fc.record({ kind: fc.constant("gone" as const), at: fc.nat() }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
      await withHub({ maxStreams: 5, maxStreamsPerClient: 3 }, async (hub) => {
        // What the hub should hold: each stream with its connection, if any.
        const streams: {
          stream: EventStream;
          client: string;
          connection?: PromiseWithResolvers<void>;
          live: boolean;
          connected: boolean;
        }[] = [];
        const holding = (who?: string) =>
          streams.filter((s) =>
            (s.live || s.connected) && (who === undefined || s.client === who)
          ).length;
        for (const command of steps) {
          if (command.kind === "open") {
            const connection = command.held
              ? Promise.withResolvers<void>()
              : undefined;
            const expected = holding() >= 5
              ? "full"
              : holding(command.client) >= 3
              ? "client-full"
              : "opened";
            const stream = open(hub, "t", command.client, connection?.promise);
            if (typeof stream === "string") {
              assert.equal(stream, expected);
              continue;
            }
            assert.equal("opened", expected);
            streams.push({
              stream,
              client: command.client,
              connection,
              live: true,
              connected: connection !== undefined,
            });
            continue;
          }
          const target = streams[command.at % Math.max(1, streams.length)];
          if (target === undefined) continue;
          if (command.kind === "end") {
            target.stream.end("overflow");
            target.live = false;
          } else if (target.connection !== undefined) {
            target.connection.resolve();
            await target.connection.promise;
            target.live = target.connected = false;
          }
          assert.equal(hub.size, streams.filter((s) => s.live).length);
          assert.equal(
            hub.closing,
            streams.filter((s) => !s.live && s.connected).length,
          );
        }
      });
    }),
  );
});

Deno.test("streams whose client is unknown are held to the total only", async () => {
  await withHub({ maxStreams: 5, maxStreamsPerClient: 1 }, async (hub) => {
    for (let i = 0; i < 5; i++) await opened(hub, "t", UNKNOWN_CLIENT);
    assert.equal(open(hub, "t", UNKNOWN_CLIENT), "full");
  });
});

Deno.test("a topic's feed runs only while the topic has readers", async () => {
  await withHub({}, async (hub) => {
    const log: string[] = [];
    hub.feed("t", () => {
      log.push("start");
      return () => log.push("stop");
    });
    assert.deepEqual(log, []);
    const a = await opened(hub, "t", "c1");
    const b = await opened(hub, "t", "c2");
    await opened(hub, "other", "c3");
    assert.deepEqual(log, ["start"]);
    await a.transport.body.cancel();
    assert.deepEqual(log, ["start"]);
    b.end();
    assert.deepEqual(log, ["start", "stop"]);
    await opened(hub, "t", "c1");
    assert.deepEqual(log, ["start", "stop", "start"]);
  });
});

Deno.test("a second feed of a topic with readers stops the first and starts at once", async () => {
  await withHub({}, async (hub) => {
    const log: string[] = [];
    const feed = (name: string) => () => {
      log.push(`start ${name}`);
      return () => log.push(`stop ${name}`);
    };
    hub.feed("t", feed("one"));
    await opened(hub, "t", "c");
    hub.feed("t", feed("two"));
    assert.deepEqual(log, ["start one", "stop one", "start two"]);
    hub.stop();
    assert.deepEqual(log, ["start one", "stop one", "start two", "stop two"]);
  });
});

Deno.test("what arrives while a stream catches up goes out after it, in order, each id once", async () => {
  await withHub({}, async (hub) => {
    const stream = await opened(hub, "t", "c");
    stream.deliver(text("three;", 3));
    stream.deliver(text("quote;"));
    stream.deliver(text("two;", 2));
    // The catch-up itself: what the store held when the stream opened.
    stream.deliver(text("one-again;", 1));
    assert.equal(await queued(stream), "");
    stream.write(text("one;"));
    stream.lastId = 2;
    stream.live();
    stream.deliver(text("three-again;", 3));
    stream.deliver(text("four;", 4));
    assert.equal(await queued(stream), "one;three;quote;four;");
  });
});

Deno.test("a reader too far behind has its stream ended and released", async () => {
  await withHub({ maxQueuedBytes: 10 }, async (hub) => {
    const stream = await opened(hub, "t", "c");
    stream.live();
    stream.write(text("0123456789"));
    assert.equal(hub.size, 1);
    stream.write(text("x"));
    assert.equal(hub.size, 0);
    await assert.rejects(stream.transport.body.getReader().read(), StreamEnded);
    // Nothing written after the end reaches anyone, and nothing throws.
    stream.write(text("late"));
  });
});

Deno.test("bytes Deno has pulled no longer count against the reader; what it has not, does", async () => {
  await withHub({ maxQueuedBytes: 10 }, async (hub) => {
    const stream = await opened(hub, "t", "c");
    stream.live();
    stream.write(text("0123456789"));
    assert.equal(hub.budget.total, 10);
    assert.equal(await queued(stream), "0123456789");
    assert.equal(hub.budget.total, 0);
    // Taken: the reader has room for another ten.
    stream.write(text("abcdefghij"));
    assert.ok(stream.open);
  });
});

Deno.test("past the total bound the reader furthest behind is ended first, and the others keep getting events", async () => {
  await withHub(
    { maxQueuedBytes: 1_000, maxTotalQueuedBytes: 25 },
    async (hub) => {
      const far = await opened(hub, "t", "far");
      const near = await opened(hub, "t", "near");
      const reading = await opened(hub, "t", "reading");
      for (const stream of [far, near, reading]) stream.live();
      far.write(text("0123456789"));
      near.write(text("01234"));
      assert.equal(await queued(reading), "");
      for (let i = 0; i < 3; i++) {
        for (const stream of hub.readers("t")) stream.write(text(`e${i};`));
        assert.equal(await queued(reading), `e${i};`);
      }
      // At the second event far is 16 bytes behind and near 11: 27 > 25.
      assert.equal(far.open, false);
      assert.equal(near.open, true);
      await assert.rejects(far.transport.body.getReader().read(), StreamEnded);
      assert.equal(await queued(near), "01234e0;e1;e2;");
      assert.equal(hub.budget.total, 0);
    },
  );
});

Deno.test("property: a reader that takes what it is sent keeps its stream, whatever passes through", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.integer({ min: 1, max: 40_000 }), { maxLength: 30 }),
      async (sizes) => {
        await withHub(
          { maxQueuedBytes: 40_000, maxTotalQueuedBytes: 40_000 },
          async (hub) => {
            const stream = await opened(hub, "t", "c");
            stream.live();
            for (const size of sizes) {
              stream.write(text("x".repeat(size)));
              assert.equal((await queued(stream)).length, size);
            }
            assert.ok(stream.open);
            assert.equal(hub.budget.total, 0);
          },
        );
      },
    ),
    { numRuns: 20 },
  );
});

Deno.test("property: every reader gets every byte once, in order, whether it waits for them or falls behind", async () => {
  const step = fc.oneof(
    fc.record({
      kind: fc.constant("write" as const),
      size: fc.integer({ min: 1, max: 40_000 }),
    }),
    fc.record({ kind: fc.constant("read" as const), at: fc.nat(2) }),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(step, { maxLength: 25 }), async (steps) => {
      await withHub({ maxQueuedBytes: 1_000_000 }, async (hub) => {
        const streams = [
          await opened(hub, "t", "a"),
          await opened(hub, "t", "b"),
          await opened(hub, "t", "c"),
        ];
        const readers = streams.map((stream) => {
          stream.live();
          return new KeptReader(stream, 5);
        });
        let sent = "";
        for (const [n, step] of steps.entries()) {
          if (step.kind === "read") await readers[step.at]!.takeWaiting();
          else {
            const chunk = String.fromCharCode(97 + n % 26).repeat(step.size);
            sent += chunk;
            for (const stream of streams) stream.write(text(chunk));
          }
        }
        for (const reader of readers) {
          await reader.takeWaiting();
          assert.equal(reader.got, sent);
        }
        assert.equal(hub.budget.total, 0);
      });
    }),
    { numRuns: 30 },
  );
});

Deno.test("a reader waiting with a read is not cut by the total bound, however small: what it is sent never waits", async () => {
  await withHub({ maxTotalQueuedBytes: 2 }, async (hub) => {
    const stream = await opened(hub, "t", "c");
    stream.live();
    const reader = new KeptReader(stream);
    for (const chunk of ["abc", "defgh", "ijklmnop"]) {
      await reader.takeWaiting();
      stream.write(text(chunk));
      assert.ok(stream.open, `cut at ${chunk}`);
    }
    await reader.takeWaiting();
    assert.equal(reader.got, "abcdefghijklmnop");
  });
});

Deno.test("a write that goes straight to a waiting read is not counted; the next, with no read waiting, is", async () => {
  await withHub({}, async (hub) => {
    const stream = await opened(hub, "t", "c");
    stream.live();
    const reader = new KeptReader(stream);
    await reader.takeWaiting();
    stream.write(text("abc"));
    assert.equal(hub.budget.total, 0);
    stream.write(text("defgh"));
    assert.equal(stream.transport.queuedBytes, 5);
    assert.equal(hub.budget.total, 5);
    await reader.takeWaiting();
    assert.equal(reader.got, "abcdefgh");
    assert.equal(hub.budget.total, 0);
  });
});

Deno.test("a reader that leaves with bytes waiting gives them all back", async () => {
  await withHub({}, async (hub) => {
    const a = await opened(hub, "t", "c1");
    const b = await opened(hub, "t", "c2");
    for (const stream of [a, b]) {
      stream.live();
      stream.write(text("waiting"));
    }
    assert.equal(hub.budget.total, 14);
    await a.transport.body.cancel();
    b.end();
    assert.equal(hub.size, 0);
    assert.equal(hub.budget.total, 0);
  });
});

Deno.test("a quiet stream gets a heartbeat from the hub's timer", async () => {
  await withHub({ heartbeatMs: 40 }, async (hub) => {
    const stream = await opened(hub, "t", "c");
    stream.live();
    const { value } = await stream.transport.body.getReader().read();
    assert.deepEqual(value, HEARTBEAT);
  });
});

Deno.test("a heartbeat goes out only after the quiet interval since the last write", async () => {
  await withHub({}, async (hub) => {
    const stream = await opened(hub, "t", "c");
    stream.live();
    stream.write(text("event;"));
    const wrote = performance.now();
    stream.heartbeat(wrote, 1000);
    stream.heartbeat(wrote + 900, 1000);
    assert.equal(await queued(stream), "event;");
    stream.heartbeat(performance.now() + 1000, 1000);
    assert.equal(await queued(stream), new TextDecoder().decode(HEARTBEAT));
  });
});

Deno.test("every beat reaches the transport with its time, quiet or not, so a WebSocket's opening is checked without a timer of its own", async () => {
  await withHub({}, (hub) => {
    const beats: [number, boolean][] = [];
    const stream = hub.open("t", "c", () => ({
      send() {},
      queuedBytes: 0,
      beat: (now: number, quiet: boolean) => void beats.push([now, quiet]),
      close() {},
    }));
    assert.ok(stream instanceof EventStream);
    stream.live();
    stream.write(text("event;"));
    const wrote = performance.now();
    stream.heartbeat(wrote + 900, 1000);
    stream.heartbeat(wrote + 1000, 1000);
    // The heartbeat counts as a write.
    const after = performance.now();
    stream.heartbeat(after, 1000);
    assert.deepEqual(beats, [
      [wrote + 900, false],
      [wrote + 1000, true],
      [after, false],
    ]);
  });
});

Deno.test("ending a topic's streams closes them for their readers; others stay open", async () => {
  await withHub({}, async (hub) => {
    const a = await opened(hub, "t", "c1");
    const other = await opened(hub, "u", "c2");
    a.live();
    a.write(text("last;"));
    hub.endAll("t");
    assert.equal(hub.size, 1);
    // A stream with bytes still queued is errored rather than left waiting.
    await assert.rejects(a.transport.body.getReader().read(), StreamEnded);
    const b = await opened(hub, "t", "c1");
    hub.endAll("t");
    assert.deepEqual(await b.transport.body.getReader().read(), {
      done: true,
      value: undefined,
    });
    assert.deepEqual([...hub.readers("u")], [other]);
  });
});

Deno.test("an aborted signal ends every stream and the hub refuses new ones", async () => {
  const stopping = new AbortController();
  const hub = new StreamHub({
    maxStreams: 10,
    heartbeatMs: 3_600_000,
    signal: stopping.signal,
  });
  await opened(hub, "t", "c1");
  await opened(hub, "u", "c2");
  stopping.abort();
  assert.equal(hub.size, 0);
  assert.equal(open(hub, "t", "c1"), "full");
});
