import { describe, expect, it } from 'vitest';
import { planAdmission } from './scheduler.ts';

describe('planAdmission', () => {
  it('admits the queue head while the batch has room', () => {
    expect(planAdmission([5, 5, 5], 0, { maxNumSeqs: 2, maxPrefillTokens: 100 })).toBe(2);
    expect(planAdmission([5, 5, 5], 1, { maxNumSeqs: 2, maxPrefillTokens: 100 })).toBe(1);
    expect(planAdmission([5], 2, { maxNumSeqs: 2, maxPrefillTokens: 100 })).toBe(0);
    expect(planAdmission([], 0, { maxNumSeqs: 2, maxPrefillTokens: 100 })).toBe(0);
  });

  it('bounds the padded prefill (rows × longest prompt) and keeps first-come order', () => {
    // 10 fits; adding 50 pads both rows to 50: 2 × 50 = 100 > 64.
    expect(planAdmission([10, 50, 5], 0, { maxNumSeqs: 8, maxPrefillTokens: 64 })).toBe(1);
    // 3 × 20 = 60 ≤ 64, a fourth makes 80.
    expect(planAdmission([20, 20, 20, 20], 0, { maxNumSeqs: 8, maxPrefillTokens: 64 })).toBe(3);
  });

  it('lets an oversized prompt into an empty batch only, so it cannot block the queue', () => {
    expect(planAdmission([100, 5], 0, { maxNumSeqs: 8, maxPrefillTokens: 64 })).toBe(1);
    expect(planAdmission([100, 5], 3, { maxNumSeqs: 8, maxPrefillTokens: 64 })).toBe(0);
  });
});
