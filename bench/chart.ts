/**
 * An SVG bar chart of the benchmark's ratios to the ceiling: per scenario and
 * server, requests/s ÷ ceiling (higher is better) and CPU per request ÷
 * ceiling (lower is better), with a line at 1.0, the ceiling itself.
 * @module
 */

/** What the chart needs of a benchmark row. */
export interface ChartRow {
  scenario: string;
  target: string;
  rpsRatio?: number;
  cpuRatio?: number;
}

const escape = (s: string) =>
  s.replace(/[<>&]/g, (c) => `&#${c.charCodeAt(0)};`);

/** The chart's title, its two bars' legends and the label of its 1.0 line. */
export interface ChartLabels {
  title: string;
  first: string;
  second: string;
  line: string;
}

const CEILING_LABELS: ChartLabels = {
  title: "Ratio to the ceiling server (same run)",
  first: "requests/s ÷ ceiling (higher is better)",
  second: "CPU/request ÷ ceiling (lower is better)",
  line: "1.0 = ceiling",
};

/**
 * Renders the rows as a self-contained SVG document: by default ratios to
 * the ceiling, the bars named by `labels` otherwise (`rpsRatio` the first).
 */
export function renderChart(
  rows: ChartRow[],
  labels: ChartLabels = CEILING_LABELS,
): string {
  const barH = 14;
  const groupH = barH * 2 + 14;
  const left = 230;
  const width = 760;
  const scale = (width - left - 60) / 1.5;
  const top = 40;
  const height = top + rows.length * groupH + 30;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">${
      escape(labels.title)
    }</text>`,
    `<rect x="${left}" y="8" width="12" height="12" fill="#2b7bb9"/><text x="${
      left + 16
    }" y="18">${escape(labels.first)}</text>`,
    `<rect x="${
      left + 250
    }" y="8" width="12" height="12" fill="#e08a1e"/><text x="${
      left + 266
    }" y="18">${escape(labels.second)}</text>`,
  ];
  rows.forEach((row, i) => {
    const y = top + i * groupH;
    parts.push(
      `<text x="${left - 8}" y="${y + barH + 4}" text-anchor="end">${
        escape(`${row.scenario} (${row.target})`)
      }</text>`,
    );
    for (
      const [j, value, color] of [[0, row.rpsRatio ?? 0, "#2b7bb9"], [
        1,
        row.cpuRatio ?? 0,
        "#e08a1e",
      ]] as const
    ) {
      const w = Math.min(value, 1.5) * scale;
      const by = y + j * barH;
      parts.push(
        `<rect x="${left}" y="${by}" width="${w.toFixed(1)}" height="${
          barH - 2
        }" fill="${color}"/>`,
      );
      parts.push(
        `<text x="${left + w + 4}" y="${by + barH - 4}">${
          value.toFixed(3)
        }</text>`,
      );
    }
  });
  const x1 = left + scale;
  parts.push(
    `<line x1="${x1}" y1="${top - 6}" x2="${x1}" y2="${
      height - 24
    }" stroke="black" stroke-dasharray="4 3"/>`,
  );
  parts.push(
    `<text x="${x1}" y="${height - 10}" text-anchor="middle">${
      escape(labels.line)
    }</text>`,
  );
  parts.push("</svg>");
  return parts.join("\n") + "\n";
}
