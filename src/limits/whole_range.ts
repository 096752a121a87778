/**
 * Whole-number bounds declared once by the library and read by the program, so both refuse the same values.
 * @module
 */

export interface WholeRange {
  readonly min: number;
  readonly max: number;
}

export interface WholeLimit extends WholeRange {
  readonly default: number;
}

export function isWithin(range: WholeRange, value: number): boolean {
  return Number.isSafeInteger(value) && value >= range.min &&
    value <= range.max;
}

export function wholeRangeText(range: WholeRange): string {
  return `must be a whole number from ${range.min} to ${range.max}`;
}

/** A `RangeError` naming `name` when outside `range`. */
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
