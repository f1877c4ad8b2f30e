import { describe, expect, it } from 'vitest';
import { planMicroBatches } from './micro-batches.ts';

describe('planMicroBatches', () => {
  it('packs longest first within the padded-token budget', () => {
    // lengths [5, 10, 3, 8], budget 20; by length: 10 (#1), 8 (#3), 5 (#0), 3 (#2)
    // [#1] pads to 10; + #3 → 2·10 = 20 ≤ 20; + #0 → 3·10 = 30 > 20 → new batch [#0] pads to 5; + #2 → 2·5 = 10
    expect(planMicroBatches([5, 10, 3, 8], 20)).toEqual({
      batches: [
        [1, 3],
        [0, 2],
      ],
      oversize: [],
    });
  });

  it('plans a sequence over the budget alone and reports it', () => {
    expect(planMicroBatches([30, 4, 4], 20)).toEqual({ batches: [[0], [1, 2]], oversize: [0] });
  });

  it('uses every sequence once and keeps multi-sequence batches within budget', () => {
    const lengths = [7, 1, 12, 12, 3, 9, 4, 4, 6, 2];
    const { batches } = planMicroBatches(lengths, 24);
    expect(batches.flat().sort((a, b) => a - b)).toEqual(lengths.map((_, i) => i));
    for (const batch of batches) {
      const longest = Math.max(...batch.map((i) => lengths[i] as number));
      expect(batch.length * longest).toBeLessThanOrEqual(24);
    }
  });

  it('names bad input', () => {
    expect(() => planMicroBatches([3, 0], 10)).toThrow(/sequence 1 length must be an integer > 0/);
    expect(() => planMicroBatches([3], 0)).toThrow(/maxPaddedTokens must be an integer > 0/);
  });
});
