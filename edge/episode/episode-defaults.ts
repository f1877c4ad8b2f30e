// The episode loop's settings: defaults written once with their reasons, and the check that runs
// before an episode starts.
import type { Sampling } from '../policy/sampling-settings.ts';
import { EpisodeSetupError } from './episode-setup-error.ts';
import { checkRetryPolicy, type RetryPolicy } from '../../protocol/openai/retry-policy.ts';

/** The sampling settings (with their defaults below) and the loop's own. */
export interface EpisodeSettings extends Sampling {
  /** One policy call, in milliseconds, before it counts as a (retryable) timeout. */
  readonly policyTimeoutMs: number;
  readonly retry: RetryPolicy;
}

/**
 * Four attempts over at most 0.5 + 1 + 2 s of waiting (full jitter: less on average): rides out a
 * restart of the inference server. 0.5 s and 8 s are also the OpenAI SDKs' first and longest delay.
 */
export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 8_000,
  jitter: 'full',
};

export const episodeDefaults: EpisodeSettings = {
  // 1: GRPO learns from the policy's own samples (DeepSeekMath, Shao et al. 2024, §4.1), and the
  // stored logprobs are only the policy's when nothing reshapes the distribution.
  temperature: 1,
  // Completion tokens per turn: 512 covers a tool call or an SQL query with room to spare.
  maxTokens: 512,
  policyTimeoutMs: 60_000,
  retry: defaultRetryPolicy,
};

/** Defaults under the given overrides; throws EpisodeSetupError naming the first bad field. */
export function resolveEpisodeSettings(overrides: Partial<EpisodeSettings> = {}): EpisodeSettings {
  const settings: EpisodeSettings = {
    ...episodeDefaults,
    ...overrides,
    retry: { ...episodeDefaults.retry, ...overrides.retry },
  };
  const problem = settingsProblem(settings);
  if (problem) throw new EpisodeSetupError('invalid-options', problem);
  return settings;
}

function settingsProblem(settings: EpisodeSettings): string | undefined {
  if (!(settings.temperature >= 0)) return `temperature must be >= 0, got ${settings.temperature}`;
  if (!Number.isInteger(settings.maxTokens) || settings.maxTokens < 1) {
    return `maxTokens must be a positive integer, got ${settings.maxTokens}`;
  }
  if (settings.seed !== undefined && !Number.isInteger(settings.seed)) {
    return `seed must be an integer, got ${settings.seed}`;
  }
  if (!(settings.policyTimeoutMs > 0))
    return `policyTimeoutMs must be positive, got ${settings.policyTimeoutMs}`;
  return checkRetryPolicy(settings.retry);
}
