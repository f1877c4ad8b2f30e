// How long a group the judge failed to score waits before the next try, across trainer runs: bounded
// exponential backoff with "equal jitter". Pure (the random draw is the caller's); the store applies
// it (db/store/mark-group-unscored.ts) and the trainer's config sets it (trainer/train/score-retry-settings.ts).

export interface ScoreRetryPolicy {
  /** Judgings a group gets in all; after the last failure it ends `failed` (score-attempts-exhausted). */
  readonly maxAttempts: number;
  /** The wait after the first failure, seconds; it doubles after each further one. */
  readonly baseSeconds: number;
  /** No wait is longer than this, seconds. */
  readonly capSeconds: number;
}

/**
 * 5 attempts, 120 s doubling to at most 1 h: waits of about 2, 4, 8 and 16 minutes (half of each
 * jittered), so a judge outage of up to ~half an hour is ridden out before a group is given up. The
 * shape (doubling, a cap, jitter) is the one AWS recommends ("Exponential Backoff And Jitter", Marc
 * Brooker, AWS Architecture Blog, 2015); the numbers are an edgerl choice, sized for outages of a
 * hosted judge API (minutes), not the per-call retries judge-with-retries.ts makes within seconds.
 */
export const defaultScoreRetry: ScoreRetryPolicy = { maxAttempts: 5, baseSeconds: 120, capSeconds: 3600 };

/** The reason a group ends with when its judgings ran out (the prefix of its status_reason). */
export const scoreAttemptsExhausted = 'score-attempts-exhausted';

/**
 * Seconds to wait after failed attempt `failures` (1 for the first failure): d = min(cap, base·2^(failures−1)),
 * then "equal jitter" d/2 + unit·d/2 (Brooker 2015), so concurrent trainers spread out but never retry
 * at once. `unit` is a uniform draw in [0, 1).
 */
export function scoreRetryDelaySeconds(failures: number, policy: ScoreRetryPolicy, unit: number): number {
  const delay = Math.min(policy.capSeconds, policy.baseSeconds * 2 ** Math.max(0, failures - 1));
  return delay / 2 + Math.min(Math.max(unit, 0), 1) * (delay / 2);
}
