import { describe, expect, it } from 'vitest';
import { realSleep } from './real-sleep.ts';
import type { RetryPolicy } from './retry-policy.ts';
import { type RetryDeps, withRetries } from './with-retries.ts';

class Failure extends Error {
  constructor(
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(retryable ? 'transient' : 'final');
  }
}

const policy: RetryPolicy = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000 };
const isRetryable = (error: unknown) => error instanceof Failure && error.retryable;

/** Records each wait instead of waiting; rejects like realSleep when the signal is aborted. */
function recordingDeps(random = 0.5): RetryDeps & { waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    random: () => random,
    sleep: async (ms, signal) => {
      waits.push(ms);
      if (signal?.aborted) throw signal.reason;
    },
  };
}

/** Fails with the given errors in turn, then succeeds with the attempt number. */
function failing(...errors: Error[]) {
  const attempts: number[] = [];
  const operation = async (attempt: number) => {
    attempts.push(attempt);
    const error = errors[attempt - 1];
    if (error) throw error;
    return `ok on ${attempt}`;
  };
  return { operation, attempts };
}

describe('withRetries', () => {
  it('retries transient failures with a jittered doubling backoff until one succeeds', async () => {
    const deps = recordingDeps(0.5);
    const { operation, attempts } = failing(new Failure(true), new Failure(true));
    const result = await withRetries(operation, { policy, deps, isRetryable });
    expect(result).toEqual({ ok: true, value: 'ok on 3', attempts: 3 });
    expect(attempts).toEqual([1, 2, 3]);
    // Full jitter at 0.5: 0.5 × 100, then 0.5 × 200.
    expect(deps.waits).toEqual([50, 100]);
  });

  it('waits at least what Retry-After asked, but never past maxDelay', async () => {
    const deps = recordingDeps(0.5);
    const { operation } = failing(new Failure(true, 700), new Failure(true, 5_000), new Failure(true, 10));
    const retries: [number, number][] = [];
    const result = await withRetries(operation, {
      policy,
      deps,
      isRetryable,
      onRetry: (retry, delayMs) => retries.push([retry, delayMs]),
    });
    expect(result.ok).toBe(true);
    // max(50, 700) = 700; min(1000, max(100, 5000)) = 1000; max(0.5 × 400, 10) = 200.
    expect(deps.waits).toEqual([700, 1_000, 200]);
    expect(retries).toEqual([
      [1, 700],
      [2, 1_000],
      [3, 200],
    ]);
  });

  it('stops at maxAttempts with the last error, with no wait after the last attempt', async () => {
    const deps = recordingDeps(1);
    const errors = [1, 2, 3, 4, 5].map(() => new Failure(true));
    const { operation, attempts } = failing(...errors);
    const result = await withRetries(operation, { policy, deps, isRetryable });
    expect(result).toEqual({ ok: false, error: errors[3], attempts: 4 });
    expect(attempts).toEqual([1, 2, 3, 4]);
    expect(deps.waits).toEqual([100, 200, 400]);
  });

  it('does not retry a failure the rule calls final', async () => {
    const deps = recordingDeps();
    const final = new Failure(false);
    const { operation, attempts } = failing(new Failure(true), final);
    const result = await withRetries(operation, { policy, deps, isRetryable });
    expect(result).toEqual({ ok: false, error: final, attempts: 2 });
    expect(attempts).toEqual([1, 2]);
    expect(deps.waits).toHaveLength(1);
  });

  it('retries at once, with no wait, what the caller says a wait cannot fix', async () => {
    const deps = recordingDeps();
    const { operation } = failing(new Failure(true), new Failure(true, 900));
    const result = await withRetries(operation, {
      policy,
      deps,
      isRetryable,
      retriesAtOnce: (error) => error instanceof Failure && error.retryAfterMs === undefined,
    });
    expect(result).toMatchObject({ ok: true, attempts: 3 });
    // Only the second failure waits: max(0.5 × 200, 900) = 900.
    expect(deps.waits).toEqual([900]);
  });

  it('waits the whole cap without jitter', async () => {
    const deps = recordingDeps(0.1);
    const { operation } = failing(new Failure(true), new Failure(true));
    await withRetries(operation, { policy: { ...policy, jitter: 'none' }, deps, isRetryable });
    expect(deps.waits).toEqual([100, 200]);
  });

  it('stops when the signal aborts, before a retry or during the wait', async () => {
    const before = new AbortController();
    const first = new Failure(true);
    const cancelling = failing(first);
    const deps = recordingDeps();
    const stopped = await withRetries(
      async (attempt) => {
        before.abort();
        return cancelling.operation(attempt);
      },
      { policy, deps, isRetryable, signal: before.signal },
    );
    expect(stopped).toEqual({ ok: false, error: first, attempts: 1 });
    expect(deps.waits).toEqual([]);

    // Aborted while waiting (the real timer): the wait ends early and the last error comes back.
    const during = new AbortController();
    const slow = failing(new Failure(true, 60_000));
    const started = Date.now();
    const pending = withRetries(slow.operation, {
      policy: { ...policy, maxDelayMs: 60_000 },
      deps: { sleep: realSleep },
      isRetryable,
      signal: during.signal,
    });
    setTimeout(() => during.abort(), 20);
    const result = await pending;
    expect(result).toMatchObject({ ok: false, attempts: 1 });
    expect(slow.attempts).toEqual([1]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('returns a thrown non-retryable error of any type as it is', async () => {
    const bug = new TypeError('not a function');
    const result = await withRetries(
      async () => {
        throw bug;
      },
      { policy, deps: recordingDeps(), isRetryable },
    );
    expect(result).toEqual({ ok: false, error: bug, attempts: 1 });
  });
});

describe('realSleep', () => {
  it('resolves after the time, and rejects with the reason at once when aborted', async () => {
    const started = performance.now();
    await realSleep(20);
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
    const reason = new Error('stop');
    await expect(realSleep(10, AbortSignal.abort(reason))).rejects.toBe(reason);
  });
});
