// How often and how long to retry: attempts, a doubling backoff with a cap, and its jitter. Pure (the
// random draw is passed in); the loop that uses it is with-retries.ts.

/** `full`: a uniform draw under the cap, so that many clients failing together do not retry together;
 * `none`: the cap itself, so that runs and their logs are reproducible. */
export const retryJitters = ['full', 'none'] as const;
export type RetryJitter = (typeof retryJitters)[number];

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  /** Cap of the first backoff, in milliseconds; doubles with each retry. */
  readonly baseDelayMs: number;
  /** No backoff is longer than this, in milliseconds, whatever a server's Retry-After asks. */
  readonly maxDelayMs: number;
  /** Default `full`. */
  readonly jitter?: RetryJitter;
}

const jitters = {
  full: (cap, random) => random * cap,
  none: (cap) => cap,
} satisfies Record<RetryJitter, (cap: number, random: number) => number>;

/**
 * Delay before retry number `retry` (1 for the first retry): the jitter applied to
 * min(maxDelay, base · 2^(retry−1)); "full jitter" is a uniform draw in [0, cap) (M. Brooker,
 * "Exponential Backoff And Jitter", AWS Architecture Blog, 2015). A server's Retry-After, when given,
 * is a floor, still capped by maxDelay so that one header cannot stall a caller for long.
 */
export function backoffDelay(
  retry: number,
  policy: RetryPolicy,
  random: number,
  retryAfterMs?: number,
): number {
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  const jittered = jitters[policy.jitter ?? 'full'](cap, random);
  return retryAfterMs === undefined
    ? jittered
    : Math.min(policy.maxDelayMs, Math.max(jittered, retryAfterMs));
}

/** A message naming the first bad field, or undefined for a usable policy. */
export function checkRetryPolicy(policy: RetryPolicy): string | undefined {
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) {
    return `retry.maxAttempts must be a positive integer, got ${policy.maxAttempts}`;
  }
  if (!(policy.baseDelayMs >= 0) || !(policy.maxDelayMs >= policy.baseDelayMs)) {
    return `retry delays must satisfy 0 <= baseDelayMs <= maxDelayMs, got ${policy.baseDelayMs} and ${policy.maxDelayMs}`;
  }
  if (policy.jitter !== undefined && !retryJitters.includes(policy.jitter)) {
    return `retry.jitter must be one of ${retryJitters.join(', ')}, got ${String(policy.jitter)}`;
  }
  return undefined;
}
