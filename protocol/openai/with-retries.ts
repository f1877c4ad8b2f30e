// Runs an async operation until it succeeds, fails in a way a retry cannot help, or runs out of
// attempts, waiting a backoff between tries. Which errors are retryable is the caller's rule (see
// retryable-status.ts); sleeping and randomness are injected so tests never wait.
import { backoffDelay, type RetryPolicy } from './retry-policy.ts';

export interface RetryDeps {
  /** Waits `ms`; rejects as soon as `signal` aborts (see real-sleep.ts). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** A uniform draw in [0, 1) for the jitter; Math.random when absent. */
  random?(): number;
}

export type RetryResult<T> =
  | { readonly ok: true; readonly value: T; readonly attempts: number }
  | { readonly ok: false; readonly error: unknown; readonly attempts: number };

export interface RetryOptions {
  readonly policy: RetryPolicy;
  readonly deps: RetryDeps;
  isRetryable(error: unknown): boolean;
  /**
   * A retryable failure the next attempt can fix without waiting (a judge answer that did not parse,
   * asked again with the problem named): retried at once, with no backoff. None by default.
   */
  retriesAtOnce?(error: unknown): boolean;
  /** Stops retrying (the last error is returned) once aborted, during a wait too. */
  readonly signal?: AbortSignal;
  /** Called before each retry, with its number (1 = first retry) and the wait (0 when at once). */
  onRetry?(retry: number, delayMs: number, error: unknown): void;
}

/**
 * An error with a numeric `retryAfterMs` (the policy client's PolicyError, the judge's failures, read
 * from the response with retry-after.ts) sets a floor under the backoff.
 */
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
      if (options.retriesAtOnce?.(error)) {
        options.onRetry?.(attempt, 0, error);
        continue;
      }
      const delayMs = backoffDelay(attempt, policy, (deps.random ?? Math.random)(), retryAfterOf(error));
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
