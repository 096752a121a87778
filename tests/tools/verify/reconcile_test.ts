/**
 * The checker's reconciliation, fed synthetic runs: clean ones must show no
 * violation, and each kind of violation planted in one must be reported,
 * counted exactly, and named.
 */
import assert from "node:assert/strict";
// deno-lint-ignore no-import-prefix
import fc from "npm:fast-check@4.10.2";
import {
  type ConnectionLog,
  type Expectations,
  INITIAL_QUOTE,
  type ReaderLog,
  type ReceivedItem,
  reconcile,
  type RunLogs,
  type WriteRecord,
} from "../../../tools/verify/reconcile.ts";
import { itemAt } from "../../_support/item_at.ts";

const SEED = 20261124;
const DURABLE: Expectations = { durable: true, faultFree: false };
const text = (id: number) => `t${id}`;

/** A run where messages 1..n were written, acknowledged, and stored as such. */
function storedRun(n: number, readers: ReaderLog[] = []): RunLogs {
  const ids = Array.from({ length: n }, (_, i) => i + 1);
  return {
    writes: ids.map((id) => ({
      kind: "message",
      value: text(id),
      start: id * 10,
      end: id * 10 + 5,
      status: 200,
    })),
    readers,
    quotesSeen: [],
    final: {
      users: [],
      messages: ids.map((id) => ({ id, text: text(id) })),
      quote: INITIAL_QUOTE,
      disagreements: [],
    },
  };
}

const msg = (id: number, t = text(id)): ReceivedItem => ({
  kind: "message",
  id,
  text: t,
});

/**
 * A reader that received `connections` (items per connection), resuming
 * each connection after the first from the last message it had received,
 * as EventSource does.
 */
function readerOf(connections: ReceivedItem[][], name = "r"): ReaderLog {
  let last: { id: number; text: string } | undefined;
  const logs: ConnectionLog[] = connections.map((items) => {
    const c: ConnectionLog = {
      status: 200,
      headersAt: 0,
      endedAt: 0,
      items,
      ...(last ? { resumeFrom: { ...last } } : {}),
    };
    for (const item of items) {
      if (item.kind === "message") last = { id: item.id, text: item.text };
    }
    return c;
  });
  return { name, connections: logs };
}

/** Splits `items` into connections at `cuts` (indexes). */
function split<T>(items: T[], cuts: number[]): T[][] {
  const points = [...new Set(cuts.map((c) => c % (items.length + 1)))]
    .sort((a, b) => a - b);
  const out: T[][] = [];
  let from = 0;
  for (const p of points) {
    out.push(items.slice(from, p));
    from = p;
  }
  out.push(items.slice(from));
  return out;
}

/** The figures of a run's one reader. */
function onlyReader(result: ReturnType<typeof reconcile>) {
  const [figures] = result.readers;
  assert.ok(figures, "reconcile reported no reader");
  return figures;
}

const readerFigures = (logs: RunLogs) => onlyReader(reconcile(logs, DURABLE));

/** A reader following messages first..n, cut into connections anywhere. */
const followed = fc.record({
  n: fc.integer({ min: 2, max: 60 }),
  first: fc.integer({ min: 1, max: 60 }),
  cuts: fc.array(fc.nat(), { maxLength: 6 }),
}).map(({ n, first, cuts }) => {
  const start = Math.min(first, n - 1);
  const ids = Array.from({ length: n - start + 1 }, (_, i) => start + i);
  return { n, ids, cuts };
});

Deno.test("a reader that got every message once, in order, over any reconnects, shows no violation", () => {
  fc.assert(
    fc.property(followed, ({ n, ids, cuts }) => {
      const run = storedRun(n, [
        readerOf(split(ids.map((id) => msg(id)), cuts)),
      ]);
      const result = reconcile(run, DURABLE);
      assert.deepEqual(result.violations, []);
      assert.equal(onlyReader(result).delivered, ids.length);
    }),
    { seed: SEED, numRuns: 300 },
  );
});

Deno.test("one message a reader never got, past its first, is missing; between two others it is a silent hole", () => {
  fc.assert(
    fc.property(
      followed,
      fc.nat(),
      ({ n, ids, cuts }, pick) => {
        const dropped = itemAt(ids, 1 + pick % (ids.length - 1));
        const kept = ids.filter((id) => id !== dropped).map((id) => msg(id));
        const run = storedRun(n, [readerOf(split(kept, cuts))]);
        const figures = readerFigures(run);
        assert.equal(figures.missing, 1);
        assert.equal(figures.silentHoles, dropped === n ? 0 : 1);
        assert.equal(figures.duplicated + figures.outOfOrder, 0);
        assert.ok(
          reconcile(run, DURABLE).violations.includes("reader r: missing: 1"),
        );
      },
    ),
    { seed: SEED, numRuns: 300 },
  );
});

Deno.test("a message received twice, on any connection, is one duplicate and nothing else", () => {
  fc.assert(
    fc.property(followed, fc.nat(), fc.nat(), ({ n, ids, cuts }, a, b) => {
      const items = ids.map((id) => msg(id));
      const at = a % items.length;
      const again = at + 1 + b % (items.length - at);
      items.splice(again, 0, itemAt(items, at));
      const figures = readerFigures(
        storedRun(n, [readerOf(split(items, cuts))]),
      );
      assert.equal(figures.duplicated, 1);
      assert.equal(
        figures.missing + figures.outOfOrder + figures.silentHoles,
        0,
      );
    }),
    { seed: SEED, numRuns: 300 },
  );
});

Deno.test("two neighbours received swapped on one connection are out of order (and the jump is a hole)", () => {
  fc.assert(
    fc.property(followed, fc.nat(), ({ n, ids }, pick) => {
      const items = ids.map((id) => msg(id));
      const at = pick % (items.length - 1);
      [items[at], items[at + 1]] = [itemAt(items, at + 1), itemAt(items, at)];
      const figures = readerFigures(storedRun(n, [readerOf([items])]));
      assert.equal(figures.outOfOrder, 1);
      assert.equal(figures.missing, 0);
      // The first of a reader's messages has nothing before it to jump from.
      assert.equal(figures.silentHoles, at === 0 ? 0 : 1);
    }),
    { seed: SEED, numRuns: 200 },
  );
});

Deno.test("a message that comes late on a later connection is out of order there too", () => {
  const reader = readerOf([[msg(1), msg(2), msg(4)], [msg(3), msg(5)]]);
  const figures = readerFigures(storedRun(5, [reader]));
  assert.deepEqual(
    [figures.outOfOrder, figures.silentHoles, figures.missing],
    [1, 1, 0],
  );
});

Deno.test("issue 25's defect 3: resumed after 3, then 7 and 8 with no gap: 3 missing, 1 silent hole", () => {
  const reader = readerOf([[msg(1), msg(2), msg(3)], [msg(7), msg(8)]]);
  const result = reconcile(storedRun(8, [reader]), DURABLE);
  assert.equal(onlyReader(result).missing, 3);
  assert.equal(onlyReader(result).silentHoles, 1);
  assert.deepEqual(result.violations, [
    "reader r: missing: 3",
    "reader r: silent holes: 1",
  ]);
});

Deno.test("a gap covers what it says it missed; over messages the history still holds, it is a false gap", () => {
  const reader = readerOf([[msg(1), msg(2), msg(3)], [
    { kind: "gap", missed: 3 },
    msg(7),
    msg(8),
  ]]);
  const figures = readerFigures(storedRun(8, [reader]));
  assert.deepEqual(
    [figures.missing, figures.silentHoles, figures.gaps, figures.falseGaps],
    [0, 0, 1, 3],
  );
  // Had ids 4-6 left the history, the same gap would be honest.
  const run = storedRun(8, [reader]);
  run.final.messages = run.final.messages.filter((m) => m.id < 4 || m.id > 6);
  const honest = readerFigures(run);
  assert.deepEqual(
    [honest.missing, honest.silentHoles, honest.falseGaps],
    [0, 0, 0],
  );
  // A gap short of the jump still leaves a silent hole and a missing message.
  const short = readerOf([[msg(1), msg(2), msg(3)], [
    { kind: "gap", missed: 2 },
    msg(7),
  ]]);
  const partly = readerFigures(storedRun(7, [short]));
  assert.deepEqual([partly.missing, partly.silentHoles], [1, 1]);
});

Deno.test("a reader left on a stream that waits in vain misses everything after it", () => {
  const figures = readerFigures(
    storedRun(10, [readerOf([[msg(1), msg(2)], [msg(3), msg(4)]])]),
  );
  assert.equal(figures.missing, 6);
  assert.equal(figures.silentHoles, 0);
});

Deno.test("a connection opened without an id owes what was stored while it was open, before the first it delivered", () => {
  const run = storedRun(8);
  // Message 5 was written at 50-55 (storedRun's clock); the stream was open from 40.
  const connection: ConnectionLog = {
    status: 200,
    headersAt: 40,
    endedAt: 1000,
    items: [msg(6), msg(7), msg(8)],
  };
  run.readers = [{ name: "r", connections: [connection] }];
  assert.equal(readerFigures(run).missing, 1);
  // Opened after it was written, the stream owed only from its first (the newest five).
  connection.headersAt = 56;
  assert.equal(readerFigures(run).missing, 0);
});

Deno.test("after a store that started afresh, a reader resuming with an old id starts again without violation; on one connection it is out of order", () => {
  const notDurable: Expectations = { durable: false, faultFree: false };
  const run = storedRun(4);
  // Ids 1-6 of an older store (other texts), then the fresh store's 1-4.
  const old = [1, 2, 3, 4, 5, 6].map((id) => msg(id, `old${id}`));
  const fresh = [1, 2, 3, 4].map((id) => msg(id));
  run.readers = [readerOf([old, fresh])];
  const result = reconcile(run, notDurable);
  assert.deepEqual(result.violations, []);
  assert.equal(onlyReader(result).notStored, 6);
  // Two restarts: the middle store's messages are not in F either.
  const middle = [1, 2, 3].map((id) => msg(id, `middle${id}`));
  run.readers = [readerOf([old, middle, fresh])];
  assert.deepEqual(reconcile(run, notDurable).violations, []);
  // Not told: the same ids on the stream that was open when the store restarted.
  run.readers = [readerOf([[...old, ...fresh]])];
  assert.deepEqual(reconcile(run, notDurable).violations, [
    "reader r: out of order: 4",
  ]);
  // Where the store must keep its data, messages it does not hold are a violation.
  run.readers = [readerOf([old, fresh])];
  assert.ok(
    reconcile(run, DURABLE).violations.includes("reader r: not stored: 6"),
  );
});

/** Writes of every kind with random answers, and a store holding exactly the acknowledged ones. */
const writeRun = fc.array(
  fc.record({
    kind: fc.constantFrom("register", "message", "quote"),
    status: fc.constantFrom(200, 200, 200, 503, 401, undefined),
    landsIfUnknown: fc.boolean(),
  }),
  { minLength: 1, maxLength: 40 },
).map((specs) => {
  const records = specs.map((s, i) => ({
    write: {
      kind: s.kind as WriteRecord["kind"],
      value: s.kind === "quote" ? `Q${i}.` : `v${i}`,
      start: i * 10,
      end: i * 10 + 5,
      status: s.status,
    } satisfies WriteRecord,
    lands: s.status === 200 || (s.status === undefined && s.landsIfUnknown),
  }));
  const writes = records.map((r) => r.write);
  const landed = records.filter((r) => r.lands).map((r) => r.write);
  const quotes = landed.filter((w) => w.kind === "quote");
  const run: RunLogs = {
    writes,
    readers: [],
    quotesSeen: quotes.map((w) => w.value),
    final: {
      users: landed.filter((w) => w.kind === "register").map((w) => w.value),
      messages: landed.filter((w) => w.kind === "message").map((w, i) => ({
        id: i + 1,
        text: w.value,
      })),
      quote: quotes.at(-1)?.value ?? INITIAL_QUOTE,
      disagreements: [],
    },
  };
  return run;
});

Deno.test("writes: a store holding exactly the acknowledged (and some unknown) shows no violation, and tallies each answer", () => {
  fc.assert(
    fc.property(writeRun, (run) => {
      const result = reconcile(run, DURABLE);
      assert.deepEqual(result.violations, []);
      for (const kind of ["register", "message", "quote"] as const) {
        const mine = run.writes.filter((w) => w.kind === kind);
        const w = result.writes[kind];
        assert.equal(
          w.acknowledged,
          mine.filter((x) => x.status === 200).length,
        );
        assert.equal(
          w.unknown,
          mine.filter((x) => x.status === undefined).length,
        );
        assert.equal(
          w.refused[503] ?? 0,
          mine.filter((x) => x.status === 503).length,
        );
      }
    }),
    { seed: SEED, numRuns: 300 },
  );
});

Deno.test("writes: a refused one the store holds is refused but stored; an acknowledged one it lacks is lost", () => {
  fc.assert(
    fc.property(writeRun, fc.nat(), (run, pick) => {
      const refused = run.writes.filter((w) =>
        w.status !== undefined && w.status !== 200 && w.kind !== "quote"
      );
      fc.pre(refused.length > 0);
      const w = itemAt(refused, pick % refused.length);
      if (w.kind === "register") run.final.users.push(w.value);
      else {
        run.final.messages.push({
          id: run.final.messages.length + 1,
          text: w.value,
        });
      }
      const result = reconcile(run, DURABLE);
      assert.equal(result.writes[w.kind].refusedStored, 1);
      assert.deepEqual(result.violations, [`${w.kind}: refused but stored: 1`]);
    }),
    { seed: SEED, numRuns: 200 },
  );
  fc.assert(
    fc.property(writeRun, fc.nat(), (run, pick) => {
      const acked = run.writes.filter((w) =>
        w.status === 200 && w.kind !== "quote"
      );
      fc.pre(acked.length > 0);
      const w = itemAt(acked, pick % acked.length);
      run.final.users = run.final.users.filter((u) => u !== w.value);
      run.final.messages = run.final.messages.filter((m) => m.text !== w.value)
        .map((m, i) => ({ id: i + 1, text: m.text }));
      const result = reconcile(run, DURABLE);
      assert.deepEqual(result.violations, [
        `${w.kind}: acknowledged but lost: 1`,
      ]);
      // Where the store may start afresh, a lost write is no violation.
      assert.deepEqual(
        reconcile(run, { durable: false, faultFree: false }).violations,
        [],
      );
    }),
    { seed: SEED, numRuns: 200 },
  );
});

Deno.test("a refused message that only reached a reader is refused but stored", () => {
  const run = storedRun(2, []);
  run.writes.push({
    kind: "message",
    value: "ghost",
    start: 0,
    end: 1,
    status: 503,
  });
  run.readers = [readerOf([[msg(1), msg(3, "ghost"), msg(2)]])];
  const result = reconcile(run, DURABLE);
  assert.equal(result.writes.message.refusedStored, 1);
  assert.ok(result.violations.includes("reader r: not stored: 1"));
});

Deno.test("quotes: the final quote must be one no acknowledged write followed; a refused one must never show", () => {
  const q = (value: string, start: number, status?: number): WriteRecord => ({
    kind: "quote",
    value,
    start,
    end: start + 5,
    status,
  });
  const run = storedRun(0);
  run.writes = [q("A.", 0, 200), q("B.", 10, 200), q("C.", 12, 503)];
  run.final.quote = "B.";
  assert.deepEqual(reconcile(run, DURABLE).violations, []);
  // B. began after A. was answered, so A. as the final quote means B. was lost.
  run.final.quote = "A.";
  assert.deepEqual(reconcile(run, DURABLE).violations, [
    "quote: acknowledged but lost: 1",
  ]);
  run.final.quote = INITIAL_QUOTE;
  assert.deepEqual(reconcile(run, DURABLE).violations, [
    "quote: acknowledged but lost: 2",
  ]);
  // Overlapping writes may land in either order.
  run.writes = [q("A.", 0, 200), q("B.", 3, 200)];
  run.final.quote = "A.";
  assert.deepEqual(reconcile(run, DURABLE).violations, []);
  // The refused C. was carried by a quote stream, even though B. replaced it.
  run.writes = [q("B.", 0, 200), q("C.", 12, 503)];
  run.final.quote = "B.";
  run.quotesSeen = ["B.", "C.", "B."];
  assert.deepEqual(reconcile(run, DURABLE).violations, [
    "quote: refused but stored: 1",
  ]);
});

Deno.test("the store: a text at two ids, a name listed twice, an id never kept, processes that disagree", () => {
  const run = storedRun(3);
  run.final.messages.push({ id: 5, text: text(2) });
  run.final.users = ["ann", "ann"];
  run.final.disagreements = ["quote differs"];
  assert.deepEqual(reconcile(run, DURABLE).violations, [
    "register: stored twice: 1",
    "message: stored twice: 1",
    "store: ids never assigned to a kept message: 1",
    "processes disagree: quote differs",
  ]);
});

Deno.test("without a fault, a refusal, a write without an answer and a refused stream are each a violation", () => {
  const run = storedRun(2, [{
    name: "r",
    connections: [
      { status: 503, items: [] },
      { items: [] },
      ...readerOf([[msg(1), msg(2)]]).connections,
    ],
  }]);
  run.writes.push(
    { kind: "quote", value: "Q.", start: 0, end: 1, status: 503 },
    { kind: "register", value: "x", start: 0, end: 1 },
  );
  const faultFree: Expectations = { durable: true, faultFree: true };
  const result = reconcile(run, faultFree);
  assert.deepEqual(onlyReader(result).refused, { 503: 1, error: 1 });
  assert.deepEqual(result.violations, [
    "register: unanswered without a fault: 1",
    "quote: refused without a fault: 1",
    "reader r: streams refused without a fault: 2",
  ]);
  assert.deepEqual(reconcile(run, DURABLE).violations, []);
});
