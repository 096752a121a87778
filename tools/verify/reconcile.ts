/**
 * Reconciliation: what clients were told, set against what the store holds
 * at the end and what each reader received. Pure: it takes the logs of a run
 * and the final state, and counts. Nothing here knows how the service works
 * inside; every figure is defined by what an outside client observes.
 *
 * ## Definitions
 *
 * A write is **acknowledged** when answered 200, **refused** when answered any
 * other status, and **unknown** when no answer came (connection error,
 * timeout): it may or may not have happened, and counts against nothing.
 *
 * The **final history** F is every message the store holds at the end, read
 * completely (the run uses a `--history` larger than all it writes) through
 * a fresh stream with `Last-Event-ID: 0`. A message is *in F* when F holds its
 * id with the same text (texts are unique, so after a store that started
 * afresh an old id with another text is not in F).
 *
 * - **acknowledged but lost**: an acknowledged registration whose name is not
 *   in the final user list; an acknowledged message whose text is not in F; a
 *   quote write that began after the write of the final quote had been
 *   answered (so it must have replaced it) and was acknowledged, or any
 *   acknowledged quote when the final quote is still the initial one. Checked only
 *   when the scenario's store keeps its data (not after a restart of a Redis
 *   without persistence); counted but not fixed at 0 when it may lose some
 *   (a failover without `--redis-wait-replicas`).
 * - **refused but stored**: a refused registration whose name is in the final
 *   user list; a refused message whose text is in F or reached any reader; a
 *   refused quote that any quote stream carried or that is the final quote.
 * - **stored twice**: a name listed twice, a text at two ids of F.
 *
 * For each reader (an `EventSource`-like follower, reconnecting with
 * `Last-Event-ID` set to the last id it received):
 *
 * - **delivered**: message events received, all connections together.
 * - **duplicated**: message events whose id and text it had already received.
 * - A message of F is **owed** to the reader when
 *   (a) the reader resumed a connection with `Last-Event-ID: N`, N being a
 *   message of F, and the message's id is above N; or
 *   (b) on a connection opened without a usable id (the reader's first, or
 *   one resuming from a message not in F, as after a store started afresh):
 *   its id is at least that of the first message of F the connection
 *   delivered, or its write began after the connection's response headers
 *   arrived and was acknowledged before the connection ended (it was stored
 *   while the stream was open, so the stream had to carry it).
 *   A `gap` event `{"missed": K}` **covers** the K ids after the last id of F
 *   the reader held when it arrived (its `Last-Event-ID`, or the message
 *   before it on that connection).
 * - **missing**: owed messages it never received and no gap covers. Since
 *   the run ends only once every reader has received a last message posted
 *   after all the others (or a time bound passed), a reader left on a stream
 *   that waits in vain misses everything after it.
 * - **out of order**: a message event, not a duplicate, whose id is not above
 *   the highest id received before it on the same connection, or a message of
 *   F whose id is not above the highest id of F received before it on any.
 *   (Across connections, ids outside F may number afresh: a store that
 *   started afresh numbers from 1 again, and readers were told by the end
 *   of their streams.)
 * - **silent holes**: a message of F whose id is more than one above the
 *   highest id of F received before it while some id between is not covered
 *   by a gap: a jump nobody told the reader about.
 * - **false gaps**: ids a gap covered that F still holds (with `--history`
 *   above everything written, nothing ever leaves the history).
 * - **not stored**: message events not in F: the reader was shown something
 *   the store does not hold. Checked only when the store keeps its data.
 *
 * Figures about the store itself: **id holes** (ids from 1 to the highest in
 * F that F lacks) and **disagreements** (final reads that differ between
 * processes after everything settled).
 *
 * **Fixed at 0** (the contract's "Writes and faults", "Exactly once, or
 * told" and "Across processes"), each named in `violations` when it is not:
 * refused but stored, stored twice, duplicated, missing, out of order,
 * silent holes, false gaps and disagreements, always; acknowledged but lost,
 * not stored and id holes, where the store keeps its data; and without any
 * fault, refused and unknown writes and refused streams too. Under a fault
 * those last three, and gaps, are the honest answers the contract allows.
 * @module
 */

/** What a write does. */
export type WriteKind = "register" | "message" | "quote";

/** One write a client made, and what it was told. */
export interface WriteRecord {
  kind: WriteKind;
  /** The name, the message text or the quote: unique in a run. */
  value: string;
  /** When the request was sent and its answer (or error) came, in ms. */
  start: number;
  end: number;
  /** The answer's status; `undefined` when no answer came. */
  status?: number;
}

/** One item of a message stream that reconciliation looks at. */
export type ReceivedItem =
  | { kind: "message"; id: number; text: string }
  | { kind: "gap"; missed: number };

/** One connection of a reader: one `GET /events`. */
export interface ConnectionLog {
  /** The `Last-Event-ID` sent, with the text of the message that carried it. */
  resumeFrom?: { id: number; text?: string };
  /** The status answered; `undefined` when the request failed. */
  status?: number;
  /** When the response headers arrived and when the stream ended, in ms. */
  headersAt?: number;
  endedAt?: number;
  items: ReceivedItem[];
}

/** Everything one reader saw. */
export interface ReaderLog {
  name: string;
  connections: ConnectionLog[];
}

/** The store's state at the end, read from outside. */
export interface FinalState {
  users: string[];
  /** F, in the order read. */
  messages: { id: number; text: string }[];
  quote: string;
  /** Final reads that differ between processes, described. */
  disagreements: string[];
}

/** The quote of a store nobody has written to. */
export const INITIAL_QUOTE = "Not set, yet !";

/** What a scenario lets the checker expect. */
export interface Expectations {
  /** The store keeps acknowledged data through the fault. */
  durable: boolean;
  /**
   * The store keeps most of it but may lose some (asynchronous replication
   * across a failover): acknowledged but lost is counted, not fixed at 0.
   */
  mayLose?: boolean;
  /** No fault at all: nothing may be refused, unanswered or turned away. */
  faultFree: boolean;
}

/** Everything a run produced. */
export interface RunLogs {
  writes: WriteRecord[];
  readers: ReaderLog[];
  /** Every value the quote streams carried. */
  quotesSeen: string[];
  final: FinalState;
}

/** The figures of one kind of write. */
export interface WriteFigures {
  acknowledged: number;
  /** Refusals by status. */
  refused: Record<string, number>;
  lost: number;
  refusedStored: number;
  storedTwice: number;
  unknown: number;
}

/** The figures of one reader. */
export interface ReaderFigures {
  name: string;
  connections: number;
  delivered: number;
  duplicated: number;
  missing: number;
  outOfOrder: number;
  silentHoles: number;
  gaps: number;
  falseGaps: number;
  notStored: number;
  /** Streams refused, by status; `error` for a request that failed. */
  refused: Record<string, number>;
}

/** The outcome of a run. */
export interface Reconciliation {
  writes: Record<WriteKind, WriteFigures>;
  readers: ReaderFigures[];
  storeIdHoles: number;
  disagreements: string[];
  /** Every figure that should be 0 and is not, in words; empty when all hold. */
  violations: string[];
}

const KINDS: WriteKind[] = ["register", "message", "quote"];

/** The most ids one gap is taken to cover: more than any run writes. */
const MAX_GAP = 10_000_000;

/**
 * Reconciles a run's logs with the final state.
 *
 * @example A clean run
 * ```ts
 * import { reconcile } from "./reconcile.ts";
 * const result = reconcile({
 *   writes: [{ kind: "message", value: "hi", start: 0, end: 1, status: 200 }],
 *   readers: [],
 *   quotesSeen: [],
 *   final: { users: [], messages: [{ id: 1, text: "hi" }], quote: "Not set, yet !", disagreements: [] },
 * }, { durable: true, faultFree: true });
 * console.assert(result.violations.length === 0);
 * ```
 */
export function reconcile(
  logs: RunLogs,
  expect: Expectations,
): Reconciliation {
  const stored = new Map(logs.final.messages.map((m) => [m.id, m.text]));
  const inF = (id: number, text?: string) =>
    text !== undefined && stored.get(id) === text;
  const delivered = new Set<string>();
  for (const reader of logs.readers) {
    for (const c of reader.connections) {
      for (const item of c.items) {
        if (item.kind === "message") delivered.add(item.text);
      }
    }
  }
  const writes = Object.fromEntries(
    KINDS.map((kind) => [
      kind,
      writeFigures(
        logs,
        kind,
        expect.durable || expect.mayLose === true,
        delivered,
      ),
    ]),
  ) as Record<WriteKind, WriteFigures>;
  const readers = logs.readers.map((r) => readerFigures(r, logs, inF));
  const ids = [...stored.keys()];
  const highest = ids.length === 0 ? 0 : Math.max(...ids);
  const result: Reconciliation = {
    writes,
    readers,
    storeIdHoles: highest - stored.size,
    disagreements: logs.final.disagreements,
    violations: [],
  };
  result.violations = violationsOf(result, expect);
  return result;
}

function writeFigures(
  logs: RunLogs,
  kind: WriteKind,
  countLost: boolean,
  delivered: Set<string>,
): WriteFigures {
  const mine = logs.writes.filter((w) => w.kind === kind);
  const { final } = logs;
  const held: string[] = kind === "register"
    ? final.users
    : kind === "message"
    ? final.messages.map((m) => m.text)
    : [final.quote];
  const holds = new Set(held);
  const carried = kind === "message"
    ? delivered
    : new Set(kind === "quote" ? logs.quotesSeen : []);
  const landed = (v: string) => holds.has(v) || carried.has(v);
  const figures: WriteFigures = {
    acknowledged: 0,
    refused: {},
    lost: 0,
    refusedStored: 0,
    storedTwice: held.length - holds.size,
    unknown: 0,
  };
  for (const w of mine) {
    if (w.status === undefined) figures.unknown++;
    else if (w.status === 200) figures.acknowledged++;
    else {
      figures.refused[w.status] = (figures.refused[w.status] ?? 0) + 1;
      if (landed(w.value)) figures.refusedStored++;
    }
  }
  if (countLost) {
    figures.lost = kind === "quote"
      ? quotesLost(mine, final.quote)
      : mine.filter((w) => w.status === 200 && !holds.has(w.value)).length;
  }
  return figures;
}

/** Acknowledged quote writes that began after the final quote's write was answered. */
function quotesLost(writes: WriteRecord[], quote: string): number {
  const acknowledged = writes.filter((w) => w.status === 200);
  if (quote === INITIAL_QUOTE) return acknowledged.length;
  const last = writes.find((w) => w.value === quote);
  if (last === undefined) return 0;
  return acknowledged.filter((w) => w.start > last.end).length;
}

function readerFigures(
  reader: ReaderLog,
  logs: RunLogs,
  inF: (id: number, text?: string) => boolean,
): ReaderFigures {
  const figures: ReaderFigures = {
    name: reader.name,
    connections: 0,
    delivered: 0,
    duplicated: 0,
    missing: 0,
    outOfOrder: 0,
    silentHoles: 0,
    gaps: 0,
    falseGaps: 0,
    notStored: 0,
    refused: {},
  };
  const seen = new Set<string>();
  const got = new Set<number>();
  const covered = new Set<number>();
  const owed = new Set<number>();
  const storedIds = new Set(logs.final.messages.map((m) => m.id));
  const oweFrom = (lowest: number) => {
    for (const id of storedIds) if (id >= lowest) owed.add(id);
  };
  // The highest id of F received so far.
  let highInF: number | undefined;
  for (const c of reader.connections) {
    if (c.status !== 200) {
      const key = c.status === undefined ? "error" : String(c.status);
      figures.refused[key] = (figures.refused[key] ?? 0) + 1;
      continue;
    }
    figures.connections++;
    const resumed = c.resumeFrom !== undefined &&
      inF(c.resumeFrom.id, c.resumeFrom.text);
    // The last id of F this connection accounts for, for gaps and holes.
    let last = resumed ? c.resumeFrom!.id : undefined;
    if (resumed) oweFrom(last! + 1);
    else oweStoredWhileOpen(c, logs, owed);
    let first = true;
    let connectionHigh = 0;
    for (const item of c.items) {
      if (item.kind === "gap") {
        figures.gaps++;
        if (last === undefined) continue;
        const missed = Number.isSafeInteger(item.missed) ? item.missed : 0;
        for (let k = 1; k <= Math.min(missed, MAX_GAP); k++) {
          covered.add(last + k);
          if (storedIds.has(last + k)) figures.falseGaps++;
        }
        last += missed;
        continue;
      }
      figures.delivered++;
      const key = `${item.id}\n${item.text}`;
      if (seen.has(key)) {
        figures.duplicated++;
        continue;
      }
      seen.add(key);
      const stored = inF(item.id, item.text);
      if (
        item.id <= connectionHigh ||
        (stored && highInF !== undefined && item.id <= highInF)
      ) figures.outOfOrder++;
      connectionHigh = Math.max(connectionHigh, item.id);
      if (!stored) figures.notStored++;
      else {
        got.add(item.id);
        if (first && !resumed) oweFrom(item.id);
        first = false;
        if (highInF !== undefined && item.id > highInF + 1) {
          for (let id = highInF + 1; id < item.id; id++) {
            if (!covered.has(id)) {
              figures.silentHoles++;
              break;
            }
          }
        }
        highInF = Math.max(highInF ?? 0, item.id);
        last = item.id;
      }
    }
  }
  for (const id of owed) {
    if (!got.has(id) && !covered.has(id)) figures.missing++;
  }
  return figures;
}

/** Rule (b) of "owed": messages written and acknowledged while `c` was open. */
function oweStoredWhileOpen(
  c: ConnectionLog,
  logs: RunLogs,
  owed: Set<number>,
): void {
  if (c.headersAt === undefined) return;
  const opened = c.headersAt;
  const ended = c.endedAt ?? Infinity;
  const during = new Set(
    logs.writes.filter((w) =>
      w.kind === "message" && w.status === 200 && w.start > opened &&
      w.end < ended
    ).map((w) => w.value),
  );
  for (const m of logs.final.messages) {
    if (during.has(m.text)) owed.add(m.id);
  }
}

function violationsOf(
  result: Reconciliation,
  expect: Expectations,
): string[] {
  const out: string[] = [];
  const must = (count: number, what: string) => {
    if (count !== 0) out.push(`${what}: ${count}`);
  };
  for (const kind of KINDS) {
    const w = result.writes[kind];
    if (expect.durable) must(w.lost, `${kind}: acknowledged but lost`);
    must(w.refusedStored, `${kind}: refused but stored`);
    must(w.storedTwice, `${kind}: stored twice`);
    if (expect.faultFree) {
      must(sum(w.refused), `${kind}: refused without a fault`);
      must(w.unknown, `${kind}: unanswered without a fault`);
    }
  }
  for (const r of result.readers) {
    must(r.duplicated, `reader ${r.name}: duplicated`);
    must(r.missing, `reader ${r.name}: missing`);
    must(r.outOfOrder, `reader ${r.name}: out of order`);
    must(r.silentHoles, `reader ${r.name}: silent holes`);
    must(r.falseGaps, `reader ${r.name}: gap over retained messages`);
    if (expect.durable) must(r.notStored, `reader ${r.name}: not stored`);
    if (expect.faultFree) {
      must(sum(r.refused), `reader ${r.name}: streams refused without a fault`);
    }
  }
  // A store that lost its data keeps its ids going up (the contract's
  // resume rule needs that), so the ids of what it lost are holes.
  if (expect.durable) {
    must(result.storeIdHoles, "store: ids never assigned to a kept message");
  }
  for (const d of result.disagreements) out.push(`processes disagree: ${d}`);
  return out;
}

/** The total of a tally by status. */
export function sum(tally: Record<string, number>): number {
  return Object.values(tally).reduce((a, b) => a + b, 0);
}
