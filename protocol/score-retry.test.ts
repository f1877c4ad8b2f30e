import { describe, expect, it } from 'vitest';
import { defaultScoreRetry, scoreRetryDelaySeconds } from './score-retry.ts';

describe('scoreRetryDelaySeconds', () => {
  const policy = { maxAttempts: 5, baseSeconds: 10, capSeconds: 50 };

  it('doubles from the base and stops at the cap; the draw spans the upper half', () => {
    // d = 10, 20, 40, then min(50, 80) = 50: lowest draw gives d/2, the highest approaches d.
    expect([1, 2, 3, 4].map((failures) => scoreRetryDelaySeconds(failures, policy, 0))).toEqual([
      5, 10, 20, 25,
    ]);
    expect([1, 2, 3, 4].map((failures) => scoreRetryDelaySeconds(failures, policy, 1))).toEqual([
      10, 20, 40, 50,
    ]);
    expect(scoreRetryDelaySeconds(2, policy, 0.5)).toBe(15); // 10 + 0.5·10
  });

  it('keeps the default within an hour', () => {
    expect(scoreRetryDelaySeconds(30, defaultScoreRetry, 1)).toBe(3600);
  });
});
