import assert from "node:assert/strict";
import fc from "fast-check";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import {
  encodeEvent,
  HEARTBEAT,
  RETRY,
} from "../../src/streams/event_stream_format.ts";

/** What a browser's `EventSource` would read from `bytes`, split into chunks at `cuts`. */
function decode(bytes: Uint8Array, cuts: number[] = []) {
  const events: EventSourceMessage[] = [];
  const retries: number[] = [];
  const comments: string[] = [];
  const parser = createParser({
    onEvent: (event) => events.push(event),
    onRetry: (ms) => retries.push(ms),
    onComment: (comment) => comments.push(comment),
  });
  const decoder = new TextDecoder();
  let from = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    parser.feed(decoder.decode(bytes.subarray(from, cut), { stream: true }));
    from = cut;
  }
  parser.feed(decoder.decode(bytes.subarray(from)));
  return { events, retries, comments };
}

/** Text with line breaks of every kind among other characters. */
const textWithBreaks = fc.array(
  fc.oneof(
    fc.string({ unit: "grapheme" }),
    fc.constantFrom("\n", "\r", "\r\n", "\n\n", " ", ":", "data: x"),
  ),
  { maxLength: 8 },
).map((parts) => parts.join(""));

Deno.test("any data decodes to itself, line breaks as a reader normalizes them", () => {
  fc.assert(
    fc.property(
      fc.constantFrom("message", "gap", "quote"),
      textWithBreaks,
      fc.option(fc.nat(), { nil: undefined }),
      fc.array(fc.nat(), { maxLength: 3 }),
      (event, data, id, cuts) => {
        const bytes = encodeEvent(event, data, id);
        const decoded = decode(bytes, cuts.map((c) => c % (bytes.length + 1)));
        assert.equal(decoded.events.length, 1);
        assert.deepEqual(decoded.events[0], {
          event,
          data: data.replace(/\r\n?/g, "\n"),
          id: id?.toString(),
        });
      },
    ),
    { numRuns: 500 },
  );
});

Deno.test("events written one after another decode as as many events", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(textWithBreaks, fc.nat()), { maxLength: 5 }),
      (list) => {
        const chunks = list.map(([data, id]) =>
          encodeEvent("message", data, id)
        );
        const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
        let at = 0;
        for (const chunk of chunks) {
          bytes.set(chunk, at);
          at += chunk.length;
        }
        const { events } = decode(bytes);
        assert.deepEqual(
          events.map((e) => [e.data, Number(e.id)]),
          list.map(([data, id]) => [data.replace(/\r\n?/g, "\n"), id]),
        );
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("one-line JSON data is one data line", () => {
  const text = new TextDecoder().decode(
    encodeEvent("message", JSON.stringify({ text: "a\nb" }), 7),
  );
  assert.equal(text, 'id: 7\nevent: message\ndata: {"text":"a\\nb"}\n\n');
});

Deno.test("an event name with a line break is refused: it would forge fields", () => {
  for (const event of ["a\nb", "a\rb", "message\n\ndata: forged"]) {
    assert.throws(() => encodeEvent(event, "{}"), RangeError);
  }
});

Deno.test("the stream's opening retry and the heartbeat read as a reader expects", () => {
  const opening = decode(RETRY);
  assert.deepEqual(opening.retries, [1000]);
  assert.deepEqual(opening.events, []);
  const beat = decode(HEARTBEAT);
  assert.deepEqual(beat.comments, ["heartbeat"]);
  assert.deepEqual(beat.events, []);
});
