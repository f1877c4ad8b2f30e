import { describe, expect, it } from 'vitest';
import { backoffDelay, checkRetryPolicy, type RetryPolicy } from './retry-policy.ts';

const policy: RetryPolicy = { maxAttempts: 10, baseDelayMs: 500, maxDelayMs: 8_000 };

describe('backoffDelay', () => {
  it('draws uniformly under a doubling cap, capped by maxDelay, with Retry-After as a floor', () => {
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

  it('waits the whole cap without jitter, whatever the draw', () => {
    const fixed: RetryPolicy = { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 40, jitter: 'none' };
    // 10 · 2^(r−1) for r = 1..4: 10, 20, 40, min(40, 80) = 40.
    expect([1, 2, 3, 4].map((retry) => backoffDelay(retry, fixed, 0.1))).toEqual([10, 20, 40, 40]);
    // Retry-After 30 over a 10 ms backoff → 30; under it (5) the backoff stands.
    expect(backoffDelay(1, fixed, 0.1, 30)).toBe(30);
    expect(backoffDelay(2, fixed, 0.1, 5)).toBe(20);
  });
});

describe('checkRetryPolicy', () => {
  it('accepts a usable policy and names the bad field of others', () => {
    expect(checkRetryPolicy(policy)).toBeUndefined();
    expect(checkRetryPolicy({ ...policy, maxAttempts: 0 })).toMatch(/maxAttempts must be a positive integer/);
    expect(checkRetryPolicy({ ...policy, maxAttempts: 1.5 })).toMatch(/maxAttempts/);
    expect(checkRetryPolicy({ ...policy, maxDelayMs: 100 })).toMatch(/baseDelayMs <= maxDelayMs/);
    expect(checkRetryPolicy({ ...policy, baseDelayMs: Number.NaN })).toMatch(/baseDelayMs <= maxDelayMs/);
    expect(checkRetryPolicy({ ...policy, jitter: 'half' as 'full' })).toMatch(
      /jitter must be one of full, none/,
    );
  });
});
