/**
 * The order in which the bench's servers take their turns in one round.
 * @module
 */

/**
 * `items` rotated so that each round starts further along: over the rounds
 * every server runs early and late alike. A fixed order measured a server's
 * place as well as the server: the p99 and the CPU per request rose with
 * each place (see `bench/results/profiles/round_order.md`).
 */
export function roundOrder<T>(
  items: readonly T[],
  round: number,
  rounds: number,
): T[] {
  const step = Math.ceil(items.length / rounds);
  const start = (round * step) % items.length;
  return [...items.slice(start), ...items.slice(0, start)];
}
