/**
 * The checker's report: per scenario, a table of writes and a table of
 * readers (Markdown, so it can be pasted as measured), then every figure
 * that should be 0 and is not. Such a figure is marked `!`.
 * @module
 */

import { type ReaderFigures, sum, type WriteFigures } from "./reconcile.ts";
import type { ScenarioResult } from "./run.ts";

function table(head: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [
    line(head),
    line(head.map(() => "---")),
    ...rows.map(line),
  ].join("\n");
}

/** `n`, marked when it should be 0 and is not. */
const must = (n: number, checked = true) => checked && n !== 0 ? `${n} !` : n;

const byStatus = (tally: Record<string, number>) =>
  Object.keys(tally).length === 0
    ? "0"
    : Object.entries(tally).map(([status, n]) => `${n} (${status})`).join(
      ", ",
    );

const ms = (n: number | undefined) =>
  n === undefined ? "none" : String(Math.round(n));

/** The middle value (the lower of the two middle ones), or undefined when there is none. */
function median(values: number[]): number | undefined {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)];
}

/** Each failover's times, then their median and maximum. */
function failoverTable({ failovers }: ScenarioResult): string {
  const rows = failovers.map((f, i) => [
    i + 1,
    ms(f.promotedMs),
    ms(f.firstAckMs === undefined ? undefined : f.firstAckMs - f.promotedMs),
    ms(f.firstAckMs),
  ]);
  const column = (
    pick: (f: (typeof failovers)[number]) => number | undefined,
  ) => failovers.map(pick).filter((n): n is number => n !== undefined);
  const promoted = column((f) => f.promotedMs);
  const back = column((f) =>
    f.firstAckMs === undefined ? undefined : f.firstAckMs - f.promotedMs
  );
  const acked = column((f) => f.firstAckMs);
  rows.push(
    ["median", ms(median(promoted)), ms(median(back)), ms(median(acked))],
    [
      "max",
      ms(Math.max(...promoted)),
      ms(back.length ? Math.max(...back) : undefined),
      ms(acked.length ? Math.max(...acked) : undefined),
    ],
  );
  return table(
    [
      "failover",
      "kill → promotion (ms)",
      "promotion → first acknowledged write (ms)",
      "kill → first acknowledged write (ms)",
    ],
    rows,
  );
}

/**
 * The report of one scenario's run.
 *
 * @example Printing a run
 * ```ts ignore
 * console.log(formatResult(await runScenario(SCENARIOS.none, options)));
 * ```
 */
export function formatResult(result: ScenarioResult): string {
  const { scenario, reconciliation: r } = result;
  const out = [
    `## ${scenario.name}: ${scenario.description}`,
    "",
    `${result.rounds} rounds, ${result.seconds.toFixed(1)} s`,
    "",
  ];
  if (r !== undefined) {
    const strict = scenario.faultFree;
    out.push(
      table(
        [
          "writes",
          "acknowledged",
          "refused",
          "acknowledged but lost",
          "refused but stored",
          "stored twice",
          "unknown",
        ],
        (Object.entries(r.writes) as [string, WriteFigures][]).map((
          [kind, w],
        ) => [
          kind,
          w.acknowledged,
          strict && sum(w.refused) ? `${byStatus(w.refused)} !` : byStatus(
            w.refused,
          ),
          scenario.durable
            ? must(w.lost)
            : scenario.mayLose
            ? w.lost
            : "(not kept)",
          must(w.refusedStored),
          must(w.storedTwice),
          must(w.unknown, strict),
        ]),
      ),
      "",
      table(
        [
          "reader",
          "streams",
          "delivered",
          "duplicated",
          "missing",
          "out of order",
          "silent holes",
          "gaps (false)",
          "not stored",
          "streams refused",
        ],
        r.readers.map((f: ReaderFigures) => [
          f.name,
          f.connections,
          f.delivered,
          must(f.duplicated),
          must(f.missing),
          must(f.outOfOrder),
          must(f.silentHoles),
          `${f.gaps} (${must(f.falseGaps)})`,
          must(f.notStored, scenario.durable),
          strict && sum(f.refused) ? `${byStatus(f.refused)} !` : byStatus(
            f.refused,
          ),
        ]),
      ),
      "",
      `store: ${must(r.storeIdHoles, scenario.durable)} id holes; processes ${
        r.disagreements.length === 0 ? "agree" : "disagree !"
      }`,
    );
  }
  if (result.failovers.length > 0) out.push("", failoverTable(result));
  const problems = [...result.errors, ...(r?.violations ?? [])];
  out.push(
    "",
    problems.length === 0
      ? "PASS: every figure the contract fixes at 0 is 0"
      : `FAIL:\n${problems.map((p) => `- ${p}`).join("\n")}`,
    "",
  );
  return out.join("\n");
}
