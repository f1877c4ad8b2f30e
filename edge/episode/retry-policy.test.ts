import { describe, expect, it } from 'vitest';
import { backoffDelay, checkRetryPolicy, defaultRetryPolicy } from './retry-policy.ts';

describe('backoffDelay', () => {
  it('draws uniformly under a doubling cap, capped by maxDelay, with Retry-After as a floor', () => {
    const policy = { maxAttempts: 10, baseDelayMs: 500, maxDelayMs: 8_000 };
    // Caps for retries 1..6: 500, 1000, 2000, 4000, 8000, min(8000, 16000) = 8000.
    expect([1, 2, 3, 4, 5, 6].map((retry) => backoffDelay(retry, policy, 1))).toEqual([
      500, 1000, 2000, 4000, 8000, 8000,
    ]);
    // random 0.25 of the cap on retry 3: 0.25 × 2000 = 500.
    expect(backoffDelay(3, policy, 0.25)).toBe(500);
    expect(backoffDelay(1, policy, 0)).toBe(0);
    // Retry-After 3000 over a jittered 250 → 3000; 20000 is capped at 8000.
    expect(backoffDelay(1, policy, 0.5, 3_000)).toBe(3_000);
    expect(backoffDelay(1, policy, 0.5, 20_000)).toBe(8_000);
  });

  it('checks a policy, naming the bad field', () => {
    expect(checkRetryPolicy(defaultRetryPolicy)).toBeUndefined();
    expect(checkRetryPolicy({ ...defaultRetryPolicy, maxAttempts: 0 })).toMatch(
      /maxAttempts must be a positive integer/,
    );
    expect(checkRetryPolicy({ ...defaultRetryPolicy, maxDelayMs: 100 })).toMatch(/baseDelayMs <= maxDelayMs/);
  });
});
