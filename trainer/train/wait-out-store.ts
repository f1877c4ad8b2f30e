// Retries a store call while the store is unreachable (db/store-unreachable.ts), waiting a capped,
// jittered, doubling delay between tries and logging one line per wait; any other error is thrown at
// once. Stops early when the caller is stopping (a signal) and gives up after `maxWaitMs`. Leaves out
// what the call is: the continuous trainer's poll, a reload after a failed cycle, the end-of-run writes.
import { unreachableCause } from '../../db/store-unreachable.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import { backoffDelay } from '../../protocol/openai/retry-policy.ts';
import { redactSecrets } from '../../protocol/redact-secrets.ts';
import type { StoreWaitSettings } from './store-wait-settings.ts';

export interface StoreWait {
  /** Cap of the first wait, ms; doubles with each failed try. */
  readonly baseDelayMs: number;
  /** Longest single wait, ms. */
  readonly maxDelayMs: number;
  /** Give up (StoreWaitExceededError) once the store has been unreachable this long, ms; null: never. */
  readonly maxWaitMs: number | null;
  /** True ends the waiting (the caller is shutting down). */
  readonly stopping: () => boolean;
  /** Resolves after `ms`, or earlier when stopping. */
  readonly wait: (ms: number) => Promise<void>;
  readonly log: (line: string) => void;
  /** What is being tried, completing "waiting for the store to …" ("look for complete groups"). */
  readonly what: string;
  readonly now?: () => number;
  readonly random?: () => number;
}

/** The store stayed unreachable past `maxWaitMs` (--max-store-wait, or the exit's grace). */
export class StoreWaitExceededError extends Error {
  override readonly name = 'StoreWaitExceededError';
  readonly code = 'store-wait-exceeded';
}

/** The waits of the train config's --store-retry-seconds, --store-retry-cap-seconds and --max-store-wait. */
export function storeWaitFrom(
  settings: StoreWaitSettings,
  rest: Pick<StoreWait, 'stopping' | 'wait' | 'log' | 'what'>,
): StoreWait {
  return {
    baseDelayMs: settings.retrySeconds * 1000,
    maxDelayMs: settings.retryCapSeconds * 1000,
    maxWaitMs: settings.maxWaitSeconds === null ? null : settings.maxWaitSeconds * 1000,
    ...rest,
  };
}

export type StoreWaitResult<T> = { readonly kind: 'done'; readonly value: T } | { readonly kind: 'stopped' };

export async function waitOutStore<T>(
  attempt: () => Promise<T>,
  options: StoreWait,
): Promise<StoreWaitResult<T>> {
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;
  let firstFailure: number | undefined;
  for (let retry = 1; ; retry += 1) {
    try {
      const value = await attempt();
      if (firstFailure !== undefined)
        options.log(`store reachable again after ${seconds(now() - firstFailure)} s: ${options.what}, done`);
      return { kind: 'done', value };
    } catch (error) {
      const cause = unreachableCause(error);
      if (!cause) throw error;
      firstFailure ??= now();
      const down = now() - firstFailure;
      const reason = redactSecrets(errorMessage(cause)).replace(/\s*\n\s*/g, ' ');
      if (options.maxWaitMs !== null && down >= options.maxWaitMs) {
        throw new StoreWaitExceededError(
          `gave up waiting for the store to ${options.what}: unreachable for ${seconds(down)} s (${reason})`,
          { cause: error },
        );
      }
      if (options.stopping()) return { kind: 'stopped' };
      const delay = backoffDelay(
        retry,
        {
          maxAttempts: Number.POSITIVE_INFINITY,
          baseDelayMs: options.baseDelayMs,
          maxDelayMs: options.maxDelayMs,
        },
        random(),
      );
      const left = options.maxWaitMs === null ? delay : Math.min(delay, options.maxWaitMs - down);
      options.log(
        `store unreachable (${reason}); waiting for the store to ${options.what}: try ${retry + 1} in ${seconds(left)} s, unreachable for ${seconds(down)} s`,
      );
      await options.wait(left);
      if (options.stopping()) return { kind: 'stopped' };
    }
  }
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(1);
}
