/**
 * Whole-number bounds, defined once where the library declares an option
 * and read by the program for its flag, so the two never disagree on what
 * a value may be.
 * @module
 */

/** The whole numbers from `min` to `max`, both included. */
export interface WholeRange {
  readonly min: number;
  readonly max: number;
}

/** A whole-number option: its range, and the value it has when not given. */
export interface WholeLimit extends WholeRange {
  readonly default: number;
}

/** Whether `value` is a whole number within `range`. */
export function isWithin(range: WholeRange, value: number): boolean {
  return Number.isSafeInteger(value) && value >= range.min &&
    value <= range.max;
}

/** What a value outside `range` is told: `must be a whole number from MIN to MAX`. */
export function wholeRangeText(range: WholeRange): string {
  return `must be a whole number from ${range.min} to ${range.max}`;
}

/** `value`, or a `RangeError` naming `name` when it is outside `range`. */
export function checkWithin(
  name: string,
  range: WholeRange,
  value: number,
): number {
  if (!isWithin(range, value)) {
    throw new RangeError(`${name} ${wholeRangeText(range)} (got ${value})`);
  }
  return value;
}
