import { describe, expect, it } from 'vitest';
import { holmAdjust } from './holm-adjust.ts';

describe('holmAdjust', () => {
  it('multiplies the k-th smallest p-value by m − k + 1 and keeps the sequence monotone', () => {
    // m = 3; sorted 0.01, 0.03, 0.04 → 3·0.01 = 0.03, max(0.03, 2·0.03 = 0.06) = 0.06,
    // max(0.06, 1·0.04) = 0.06. Given in the order 0.04, 0.01, 0.03.
    const adjusted = holmAdjust([0.04, 0.01, 0.03]);
    expect(adjusted[0]).toBeCloseTo(0.06, 15);
    expect(adjusted[1]).toBeCloseTo(0.03, 15);
    expect(adjusted[2]).toBeCloseTo(0.06, 15);
  });

  it('caps at 1, leaves a single p-value alone and skips NaN', () => {
    expect(holmAdjust([0.6, 0.7])).toEqual([1, 1]); // 2·0.6 = 1.2 → 1; max(1, 0.7) = 1
    expect(holmAdjust([0.02])).toEqual([0.02]);
    // NaN does not count: m = 2 → 2·0.01 = 0.02, max(0.02, 0.5) = 0.5
    const adjusted = holmAdjust([0.5, Number.NaN, 0.01]);
    expect(adjusted[1]).toBeNaN();
    expect(adjusted[0]).toBeCloseTo(0.5, 15);
    expect(adjusted[2]).toBeCloseTo(0.02, 15);
  });
});
