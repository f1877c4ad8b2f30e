// One policy call with its timeout and its retries: a response, or the reason there is none.
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import type { PolicyClient, PolicyResponse } from '../policy/policy-client.ts';
import { isRetryablePolicyError } from '../policy/policy-error.ts';
import type { EpisodeSettings } from './episode-defaults.ts';
import { startDeadline } from '../../protocol/deadline.ts';
import { errorMessage } from '../../protocol/error-message.ts';
import { type RetryDeps, withRetries } from '../../protocol/openai/with-retries.ts';

export interface AskPolicyInput {
  readonly policy: PolicyClient;
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolSpec[];
  readonly toolChoice?: 'auto' | 'required';
  readonly strictTools?: boolean;
  readonly model: string;
  readonly settings: EpisodeSettings;
  /** Assistant turns already taken: offsets the sampling seed. */
  readonly turn: number;
  readonly deps: RetryDeps;
  /** The episode's signal: cancellation stops the call and any further retry. */
  readonly signal?: AbortSignal;
  onRetry?(retry: number, delayMs: number, error: unknown): void;
}

export type Asked =
  | { readonly ok: true; readonly response: PolicyResponse; readonly attempts: number }
  | { readonly ok: false; readonly reason: string };

export async function askPolicy(input: AskPolicyInput): Promise<Asked> {
  const { settings, signal } = input;
  const result = await withRetries(
    async () => {
      const deadline = startDeadline(settings.policyTimeoutMs, signal);
      try {
        return await input.policy.complete({
          messages: [...input.messages],
          tools: input.tools,
          ...(input.toolChoice ? { toolChoice: input.toolChoice } : {}),
          ...(input.strictTools ? { strictTools: true } : {}),
          model: input.model,
          temperature: settings.temperature,
          maxTokens: settings.maxTokens,
          // Turn n is sent seed + n, so an episode's turns do not repeat one draw.
          ...(settings.seed !== undefined ? { seed: settings.seed + input.turn } : {}),
          signal: deadline.signal,
        });
      } finally {
        deadline.clear();
      }
    },
    {
      policy: settings.retry,
      deps: input.deps,
      isRetryable: isRetryablePolicyError,
      signal,
      onRetry: input.onRetry,
    },
  );
  if (result.ok) return { ok: true, response: result.value, attempts: result.attempts };
  if (signal?.aborted) return { ok: false, reason: 'cancelled' };
  const tries = result.attempts === 1 ? '1 attempt' : `${result.attempts} attempts`;
  return { ok: false, reason: `policy: ${errorMessage(result.error)} (after ${tries})` };
}
