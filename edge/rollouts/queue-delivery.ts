// How the Worker's queue consumer treats deliveries: how many a message gets, and how long a failed
// one waits before the next. Kept apart from worker.ts, whose module may export only handlers
// (workerd reads every named export of the main module as an entrypoint).

/** wrangler.toml's `max_retries` (3) plus the first delivery; a test keeps the two in step. */
export const queueMaxDeliveries = 4;

/** Seconds before a failed episode message is delivered again: 10 s, 20 s, 40 s, … capped at 5 min. */
export function retryDelaySeconds(attempts: number): number {
  return Math.min(300, 10 * 2 ** (attempts - 1));
}
