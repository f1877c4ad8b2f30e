// The largest element-wise difference between two arrays, for tests that compare against a reference
// with a stated tolerance and report how far off they are. Leaves out relative tolerances.
import { expect } from 'vitest';

/** The largest |a[i] − b[i]| and its index (−1 for empty arrays); a NaN difference is the largest. */
export function largestDifference(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
): { difference: number; index: number } {
  if (a.length !== b.length) throw new RangeError(`length ${a.length} vs ${b.length}`);
  let difference = 0;
  let index = -1;
  for (let i = 0; i < a.length; i++) {
    const here = Math.abs((a[i] as number) - (b[i] as number));
    if (Number.isNaN(here)) return { difference: here, index: i };
    if (here > difference) {
      difference = here;
      index = i;
    }
  }
  return { difference, index };
}

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  return largestDifference(a, b).difference;
}

/** Fails unless every element is within `tolerance`, naming the largest difference and where. */
export function expectClose(actual: ArrayLike<number>, expected: readonly number[], tolerance: number): void {
  expect(actual.length, 'length').toBe(expected.length);
  const { difference, index } = largestDifference(actual, expected);
  const message = `largest |difference| ${difference} at index ${index}: got [${Array.from(actual)}], want [${expected}]`;
  expect(difference <= tolerance, message).toBe(true);
}
