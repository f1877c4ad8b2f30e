// Bounded exponential backoff with full jitter for policy calls and store writes. Pure: the random
// draw is passed in, so tests choose it.

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  /** Cap of the first backoff, in milliseconds; doubles with each retry. */
  readonly baseDelayMs: number;
  /** No backoff is longer than this, in milliseconds. */
  readonly maxDelayMs: number;
}

/** Four attempts over at most 0.5 + 1 + 2 s of waiting: rides out a restart of the inference server. */
export const defaultRetryPolicy: RetryPolicy = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 8_000 };

/**
 * Delay before retry number `retry` (1 for the first retry): "full jitter", a uniform draw in
 * [0, min(maxDelay, base · 2^(retry−1))) (M. Brooker, "Exponential Backoff And Jitter", AWS
 * Architecture Blog, 2015), so that many episodes failing together do not retry together.
 * A server's Retry-After, when given, is a floor (still capped by maxDelay).
 */
export function backoffDelay(
  retry: number,
  policy: RetryPolicy,
  random: number,
  retryAfterMs?: number,
): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  const jittered = random * cap;
  return retryAfterMs === undefined
    ? jittered
    : Math.min(policy.maxDelayMs, Math.max(jittered, retryAfterMs));
}

export function checkRetryPolicy(policy: RetryPolicy): string | undefined {
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) {
    return `retry.maxAttempts must be a positive integer, got ${policy.maxAttempts}`;
  }
  if (!(policy.baseDelayMs >= 0) || !(policy.maxDelayMs >= policy.baseDelayMs)) {
    return `retry delays must satisfy 0 <= baseDelayMs <= maxDelayMs, got ${policy.baseDelayMs} and ${policy.maxDelayMs}`;
  }
  return undefined;
}
