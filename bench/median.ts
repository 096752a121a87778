/**
 * The median the benchmarks report, so that one slow round or start does not
 * move a figure, and the percentiles of latency lists.
 * @module
 */

/** The middle value of `xs`, or the mean of the two middle ones; NaN when it is empty. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const upper = s[Math.floor(s.length / 2)] ?? NaN;
  return s.length % 2 ? upper : ((s[s.length / 2 - 1] ?? NaN) + upper) / 2;
}

/** The value at fraction `p` (0.5, 0.99) of `sorted` (ascending); NaN when it is empty. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ??
    NaN;
}
