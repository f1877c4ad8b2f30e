import { describe, expect, it } from 'vitest';
import { retryDelaySeconds } from './queue-delivery.ts';

describe('retryDelaySeconds', () => {
  it('doubles from 10 s and stops at 5 minutes', () => {
    // 10 · 2^(attempts − 1): 10, 20, 40, 80, 160, then 320 capped at 300.
    expect([1, 2, 3, 4, 5, 6, 7].map(retryDelaySeconds)).toEqual([10, 20, 40, 80, 160, 300, 300]);
  });
});
