import { describe, expect, it } from 'vitest';
import { largestFallBelowBest } from './stability.ts';

describe('largestFallBelowBest', () => {
  it('measures falls after the burn-in against the best before them, burn-in included', () => {
    // Round 2 (index 1) is the best, inside the burn-in; round 6 falls 0.5 below it.
    expect(largestFallBelowBest([0.2, 0.9, 0.5, 0.6, 0.8, 0.4, 0.9], 4)).toBeCloseTo(0.5);
    // A fall inside the burn-in alone does not count.
    expect(largestFallBelowBest([0.9, 0.1, 0.95, 0.96], 2)).toBe(0);
    expect(largestFallBelowBest([0.1, 0.2, 0.3], 0)).toBe(0);
    expect(largestFallBelowBest([], 4)).toBe(0);
  });
});
