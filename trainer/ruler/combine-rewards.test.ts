import { describe, expect, it } from 'vitest';
import { combineRewards } from './combine-rewards.ts';

describe('combineRewards', () => {
  it('weights both components and keeps them visible', () => {
    // 0.7·0.8 + 0.3·1 = 0.56 + 0.3 = 0.86
    const result = combineRewards({ judgeScore: 0.8, verifierReward: 1 }, { judge: 0.7, verifier: 0.3 });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.reward).toBeCloseTo(0.86, 12);
    expect(result.value).toMatchObject({
      judgeScore: 0.8,
      verifierReward: 1,
      weights: { judge: 0.7, verifier: 0.3 },
    });
  });

  it('allows a missing component only when its weight is zero', () => {
    // judge only: 1·0.25 = 0.25
    const judgeOnly = combineRewards({ judgeScore: 0.25 }, { judge: 1, verifier: 0 });
    expect(judgeOnly.ok && judgeOnly.value.reward).toBe(0.25);
    const missing = combineRewards({ judgeScore: 0.25 }, { judge: 1, verifier: 0.5 });
    expect(missing).toEqual({ ok: false, error: 'verifier reward is missing but weighted 0.5' });
    expect(combineRewards({ judgeScore: Number.NaN }, { judge: 1, verifier: 0 }).ok).toBe(false);
  });
});
