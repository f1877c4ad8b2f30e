// Runs an async operation until it succeeds, fails with a non-retryable error, or runs out of
// attempts. Sleeping and randomness are injected so tests never wait.
import { backoffDelay, type RetryPolicy } from './retry-policy.ts';

export interface RetryDeps {
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  random(): number;
}

export type RetryResult<T> =
  | { readonly ok: true; readonly value: T; readonly attempts: number }
  | { readonly ok: false; readonly error: unknown; readonly attempts: number };

export interface RetryOptions {
  readonly policy: RetryPolicy;
  readonly deps: RetryDeps;
  isRetryable(error: unknown): boolean;
  /** Stops retrying (the last error is returned) once aborted. */
  readonly signal?: AbortSignal;
  /** Called before each wait, with the retry number (1 = first retry). */
  onRetry?(retry: number, delayMs: number, error: unknown): void;
}

export async function withRetries<T>(
  operation: (attempt: number) => Promise<T>,
  options: RetryOptions,
): Promise<RetryResult<T>> {
  const { policy, deps, signal } = options;
  for (let attempt = 1; ; attempt++) {
    try {
      return { ok: true, value: await operation(attempt), attempts: attempt };
    } catch (error) {
      if (attempt >= policy.maxAttempts || !options.isRetryable(error) || signal?.aborted) {
        return { ok: false, error, attempts: attempt };
      }
      const retryAfterMs = retryAfterOf(error);
      const delayMs = backoffDelay(attempt, policy, deps.random(), retryAfterMs);
      options.onRetry?.(attempt, delayMs, error);
      try {
        await deps.sleep(delayMs, signal);
      } catch {
        return { ok: false, error, attempts: attempt };
      }
    }
  }
}

function retryAfterOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('retryAfterMs' in error)) return undefined;
  return typeof error.retryAfterMs === 'number' ? error.retryAfterMs : undefined;
}

/** Real timers: resolves after `ms`, rejects as soon as `signal` aborts. */
export function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
