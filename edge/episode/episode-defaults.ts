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
  /** Tool calls run per assistant turn; the calls past it get one refusal (limit-tool-calls.ts). */
  readonly maxToolCallsPerTurn: number;
  /** Tool time (sandbox time) one episode may spend, in ms; past it calls are refused, not run. */
  readonly toolBudgetMs: number;
  /** Bytes of one reply the loop stores (content + tool-call arguments, UTF-8); a larger one ends it `error`. */
  readonly maxReplyBytes: number;
  /** The policy's vocabulary size: a token id must be below it. Unset: only the int4 bound (2^31 − 1). */
  readonly vocabSize?: number;
}

/**
 * The bounds a policy's reply is held to (docs/edge.md, "Bounds"). Each one was a hole a hostile
 * policy found: 5,000 calls in one reply all ran; 40 heavy queries held the SQL sandbox 75 s; a 30 MB
 * reply was stored as one turn.
 */
export const episodeBoundDefaults = {
  // 16: more than any edgerl environment asks for in one turn (sql-agent and multi-hop make one or two
  // calls a turn), few enough that a turn's tool turns stay a small write.
  maxToolCallsPerTurn: 16,
  // 60 s: six full tool timeouts (environment.ts's 10 s default), and an sql-agent episode's eight
  // turns of ordinary queries take well under a second each.
  toolBudgetMs: 60_000,
  // 1 MiB: the default 512 completion tokens are ~2 KB; even a 32k-token turn is under 200 KB.
  maxReplyBytes: 1024 * 1024,
} as const;

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
  ...episodeBoundDefaults,
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
  for (const name of ['maxToolCallsPerTurn', 'toolBudgetMs', 'maxReplyBytes'] as const) {
    if (!Number.isInteger(settings[name]) || settings[name] < 1)
      return `${name} must be a positive integer, got ${settings[name]}`;
  }
  if (settings.vocabSize !== undefined && !(Number.isInteger(settings.vocabSize) && settings.vocabSize >= 1))
    return `vocabSize must be a positive integer, got ${settings.vocabSize}`;
  return checkRetryPolicy(settings.retry);
}
