import { describe, expect, it } from 'vitest';
import { isRetryablePolicyError, PolicyError } from './policy-error.ts';

describe('isRetryablePolicyError', () => {
  it('retries the network, timeouts and the shared retryable statuses only', () => {
    const cases: [PolicyError | Error, boolean][] = [
      [new PolicyError('network', 'x'), true],
      [new PolicyError('timeout', 'x'), true],
      [new PolicyError('http', 'x', { status: 408 }), true],
      [new PolicyError('http', 'x', { status: 409 }), true],
      [new PolicyError('http', 'x', { status: 429 }), true],
      [new PolicyError('http', 'x', { status: 500 }), true],
      [new PolicyError('http', 'x', { status: 503 }), true],
      [new PolicyError('http', 'x', { status: 400 }), false],
      [new PolicyError('http', 'x', { status: 401 }), false],
      [new PolicyError('http', 'x'), false],
      [new PolicyError('invalid-response', 'x'), false],
      [new PolicyError('cancelled', 'x'), false],
      [new Error('plain'), false],
    ];
    for (const [error, retryable] of cases)
      expect(isRetryablePolicyError(error), `${error.message} ${(error as PolicyError).status}`).toBe(
        retryable,
      );
  });

  it('carries its code, status and wait', () => {
    const error = new PolicyError('http', 'HTTP 429', { status: 429, retryAfterMs: 1_500 });
    expect(error).toMatchObject({ name: 'PolicyError', code: 'http', status: 429, retryAfterMs: 1_500 });
  });
});
