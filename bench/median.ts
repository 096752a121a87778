/**
 * The median the benchmarks report, so that one slow round or start does not
 * move a figure.
 * @module
 */

/** The middle value of `xs`, or the mean of the two middle ones. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2
    ? s[(s.length - 1) / 2]
    : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
