/** One bound over the bytes waiting for all readers: who is cut, and what is counted once. */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type BudgetShare,
  StreamBudget,
} from "../../src/streams/stream_budget.ts";

/** A reader whose queue is the chunks it holds plus `own` bytes only it has. */
class Reader {
  held: Uint8Array[] = [];
  own = 0;
  cut = false;
  share: BudgetShare;
  constructor(budget: StreamBudget) {
    this.share = budget.share(() => this.queued, () => this.cut = true);
  }
  get queued(): number {
    return this.held.reduce((sum, c) => sum + c.byteLength, 0) + this.own;
  }
  hold(chunk: Uint8Array): void {
    this.held.push(chunk);
    this.share.hold(chunk, chunk.byteLength);
  }
  take(): void {
    const chunk = this.held.shift();
    if (chunk !== undefined) this.share.drop(chunk);
  }
  setOwn(bytes: number): void {
    this.own = bytes;
    this.share.measure();
  }
}

Deno.test("a thousand readers holding the same 300 KB count 300 KB, and none is cut", () => {
  const budget = new StreamBudget(64 * 1024 * 1024);
  const history = Array.from({ length: 5 }, () => new Uint8Array(61_440));
  const readers = Array.from({ length: 1_000 }, () => new Reader(budget));
  for (const reader of readers) for (const chunk of history) reader.hold(chunk);
  assert.equal(budget.total, 5 * 61_440);
  assert.ok(readers.every((r) => !r.cut));
  for (const reader of readers) reader.share.close();
  assert.equal(budget.total, 0);
});

Deno.test("past the total, the reader furthest behind is cut first, then the next, until within it", () => {
  const budget = new StreamBudget(100);
  const [a, b, c] = [0, 1, 2].map(() => new Reader(budget));
  a!.setOwn(50);
  b!.setOwn(40);
  c!.hold(new Uint8Array(10));
  assert.equal(budget.total, 100);
  c!.hold(new Uint8Array(60));
  // c now waits for 70, the most: cutting it alone brings 160 back to 90.
  assert.deepEqual([a!.cut, b!.cut, c!.cut], [false, false, true]);
  assert.equal(budget.total, 90);
  // A cut share counts nothing more.
  c!.hold(new Uint8Array(1_000));
  assert.equal(budget.total, 90);
});

Deno.test("own bytes that drained unseen cost no one their stream: all are read again before a cut", () => {
  const budget = new StreamBudget(100);
  const drained = new Reader(budget);
  drained.setOwn(90);
  // Drained, but not measured since (a WebSocket between two ticks).
  drained.own = 0;
  const other = new Reader(budget);
  other.setOwn(50);
  assert.deepEqual([drained.cut, other.cut], [false, false]);
  assert.equal(budget.total, 50);
});

Deno.test("property: the total is each held chunk once plus every reader's own bytes, never above the bound; whoever is cut was furthest behind", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 1_000 }),
      fc.array(
        fc.record({
          who: fc.integer({ min: 0, max: 4 }),
          chunk: fc.integer({ min: 0, max: 5 }),
          own: fc.integer({ min: 0, max: 300 }),
          act: fc.constantFrom("hold", "take", "own", "close"),
        }),
        { maxLength: 60 },
      ),
      (max, steps) => {
        const budget = new StreamBudget(max);
        const chunks = [1, 10, 50, 100, 200, 400].map((n) => new Uint8Array(n));
        const readers = [0, 1, 2, 3, 4].map(() => new Reader(budget));
        const open = () => readers.filter((r) => !r.cut);
        for (const { who, chunk, own, act } of steps) {
          const reader = readers[who];
          if (reader === undefined || reader.cut) continue;
          const before = new Map(open().map((r) => [r, r.queued]));
          if (act === "hold") reader.hold(chunks[chunk]!);
          else if (act === "take") reader.take();
          else if (act === "own") reader.setOwn(own);
          else {
            reader.share.close();
            reader.cut = true;
            continue;
          }
          const cut = [...before.keys()].filter((r) => r.cut);
          const kept = open().map((r) => r.queued);
          for (const r of cut) {
            assert.ok(kept.every((q) => q <= r.queued));
          }
          for (const r of cut) {
            r.held = [];
            r.own = 0;
          }
          const distinct = new Set(open().flatMap((r) => r.held));
          const held = [...distinct].reduce((s, c) => s + c.byteLength, 0);
          const owns = open().reduce((s, r) => s + r.own, 0);
          assert.equal(budget.total, held + owns);
          assert.ok(budget.total <= max);
        }
      },
    ),
  );
});

Deno.test("a share says it is waiting while it holds chunks or last had bytes of its own, and not once both are gone", () => {
  const budget = new StreamBudget(1000);
  const reader = new Reader(budget);
  assert.equal(reader.share.waiting, false);
  const chunk = new Uint8Array(10);
  reader.hold(chunk);
  assert.equal(reader.share.waiting, true);
  reader.take();
  assert.equal(reader.share.waiting, false);
  reader.setOwn(5);
  assert.equal(reader.share.waiting, true);
  // Drained unseen: still waiting until measured again.
  reader.own = 0;
  assert.equal(reader.share.waiting, true);
  reader.share.measure();
  assert.equal(reader.share.waiting, false);
});
