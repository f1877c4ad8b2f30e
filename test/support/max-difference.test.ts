import { describe, expect, it } from 'vitest';
import { expectClose, largestDifference, maxAbsDiff } from './max-difference.ts';

describe('largestDifference', () => {
  it('finds the largest absolute difference and where it is', () => {
    // |1 − 1| = 0, |2 − 2.5| = 0.5, |3 − 1| = 2, |4 − 4.25| = 0.25
    expect(largestDifference([1, 2, 3, 4], [1, 2.5, 1, 4.25])).toEqual({ difference: 2, index: 2 });
    expect(maxAbsDiff([], [])).toBe(0);
    expect(() => maxAbsDiff([1], [1, 2])).toThrow(/length 1 vs 2/);
  });

  it('reports a NaN even when larger differences follow it', () => {
    expect(largestDifference([Number.NaN, 10], [0, 0])).toEqual({ difference: Number.NaN, index: 0 });
    expect(() => expectClose([Number.NaN, 10], [0, 10], 1)).toThrow(/largest \|difference\| NaN at index 0/);
  });

  it('passes within the tolerance and fails beyond it', () => {
    expectClose(new Float32Array([1, 2]), [1.05, 2], 0.1);
    expect(() => expectClose([1, 2], [1, 2.5], 0.1)).toThrow(/0.5 at index 1/);
  });
});
