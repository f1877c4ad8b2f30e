// RULER's one typed config: which judge to call, how hard to try, how to order the group, what tokens
// cost and how to mix in the verifier reward. Defaults are written once below, each with its source.
// Only `rulerConfigFromEnv` reads variables, and only from the object it is given.
import { z } from 'zod';
import { formatIssues } from '../../protocol/format-issues.ts';
import { DEFAULT_REWARD_WEIGHTS } from './combine-rewards.ts';

const count = (min: number, max: number) => z.number().int().min(min).max(max);
const price = z.number().finite().nonnegative();

export const rulerConfigSchema = z
  .object({
    /** OpenAI-compatible base URL, up to and including `/v1` (OpenAI, vLLM, Ollama, OpenRouter…). */
    baseUrl: z.url({
      protocol: /^https?$/,
      error: 'must be an http(s) URL such as http://127.0.0.1:8000/v1',
    }),
    /** Judge model name as the endpoint knows it. */
    model: z.string().trim().min(1),
    /** Sent as `Authorization: Bearer …` when set; local vLLM/Ollama servers usually need none. */
    apiKey: z.string().min(1).optional(),
    /** Per request, ms. 120 s: a reasoning judge reading 8 trajectories can take a minute; the OpenAI
     *  SDK's 600 s default would stall a training step for ten minutes per attempt. */
    timeoutMs: count(1, 3_600_000).default(120_000),
    /** Retries after the first attempt, per ordering. 2 = the OpenAI SDK's default (3 attempts, as
     *  ART·E wrapped RULER). */
    maxRetries: count(0, 10).default(2),
    /** K: how many orders to judge the group in, averaging the scores. 1 = RULER's single call;
     *  2 cancels linear position bias (plan-orderings.ts) at twice the cost. */
    orderings: count(1, 16).default(1),
    /** Base seed of the order shuffles (mixed with the group's hash, so groups get different orders). */
    seed: count(0, 0xffffffff).default(0),
    /** Sampling temperature; unset = the endpoint's default (OpenAI reasoning models accept no other). */
    temperature: z.number().min(0).max(2).optional(),
    /** First retry delay and cap, ms; doubled per retry. 0.5 s / 8 s as in the OpenAI Node SDK. */
    backoffBaseMs: count(0, 600_000).default(500),
    backoffMaxMs: count(0, 600_000).default(8_000),
    /** USD per million prompt / completion tokens; set both to get `costUsd` estimates. */
    pricePromptPerMillion: price.optional(),
    priceCompletionPerMillion: price.optional(),
    /** Scores whose max − min is within this carry no signal (same default as trainer/grpo/advantages.ts). */
    noSignalTolerance: z.number().finite().nonnegative().default(1e-9),
    /** The environment's rubric, replacing the default; a per-call rubric replaces this one. */
    rubric: z.string().trim().min(1).optional(),
    /** reward = judge·score + verifier·verifierReward (combine-rewards.ts). Default: judge only. */
    rewardWeights: z
      .object({ judge: z.number().finite(), verifier: z.number().finite() })
      .default({ ...DEFAULT_REWARD_WEIGHTS }),
  })
  .superRefine((config, ctx) => {
    if ((config.pricePromptPerMillion === undefined) !== (config.priceCompletionPerMillion === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: ['priceCompletionPerMillion'],
        message: 'set both prices (prompt and completion, USD per million tokens) or neither',
      });
    }
    if (config.backoffMaxMs < config.backoffBaseMs) {
      ctx.addIssue({ code: 'custom', path: ['backoffMaxMs'], message: 'must be at least backoffBaseMs' });
    }
    if (config.rewardWeights.judge === 0 && config.rewardWeights.verifier === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['rewardWeights'],
        message: 'at least one weight must be non-zero',
      });
    }
  });

export type RulerConfigInput = z.input<typeof rulerConfigSchema>;
export type RulerConfig = z.output<typeof rulerConfigSchema>;

export class RulerConfigError extends Error {
  override readonly name = 'RulerConfigError';
  readonly code = 'ruler-config';
}

export function resolveRulerConfig(input: RulerConfigInput): RulerConfig {
  const parsed = rulerConfigSchema.safeParse(input);
  if (!parsed.success) throw new RulerConfigError(`invalid RULER config: ${formatIssues(parsed.error)}`);
  return parsed.data;
}

/** Environment variables, their config field, and how to read them. */
const envVariables = {
  EDGERL_JUDGE_BASE_URL: ['baseUrl', 'string'],
  EDGERL_JUDGE_MODEL: ['model', 'string'],
  EDGERL_JUDGE_API_KEY: ['apiKey', 'string'],
  EDGERL_JUDGE_TIMEOUT_MS: ['timeoutMs', 'number'],
  EDGERL_JUDGE_MAX_RETRIES: ['maxRetries', 'number'],
  EDGERL_JUDGE_ORDERINGS: ['orderings', 'number'],
  EDGERL_JUDGE_SEED: ['seed', 'number'],
  EDGERL_JUDGE_TEMPERATURE: ['temperature', 'number'],
  EDGERL_JUDGE_PRICE_PROMPT_PER_MTOK: ['pricePromptPerMillion', 'number'],
  EDGERL_JUDGE_PRICE_COMPLETION_PER_MTOK: ['priceCompletionPerMillion', 'number'],
} as const satisfies Record<string, readonly [keyof RulerConfigInput, 'string' | 'number']>;

/**
 * Reads EDGERL_JUDGE_* variables (plus EDGERL_RULER_JUDGE_WEIGHT / EDGERL_RULER_VERIFIER_WEIGHT) from `env`; `overrides`
 * (e.g. CLI flags, an environment's rubric) win. EDGERL_JUDGE_API_KEY may be left out only for a judge on
 * this machine (localhost), where vLLM and Ollama run without keys.
 */
export function rulerConfigFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  overrides: Partial<RulerConfigInput> = {},
): RulerConfig {
  const input: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, [field, kind]] of Object.entries(envVariables)) {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') continue;
    const value = kind === 'number' ? Number(raw) : raw;
    if (typeof value === 'number' && !Number.isFinite(value))
      problems.push(`${name} must be a number, got "${raw}"`);
    input[field] = value;
  }
  const weights = readWeights(env, problems);
  if (weights) input.rewardWeights = weights;
  for (const [field, value] of Object.entries(overrides)) if (value !== undefined) input[field] = value;

  const missing: string[] = [];
  if (input.baseUrl === undefined) missing.push('EDGERL_JUDGE_BASE_URL');
  if (input.model === undefined) missing.push('EDGERL_JUDGE_MODEL');
  const keyNeeded =
    input.apiKey === undefined && typeof input.baseUrl === 'string' && !isLocalUrl(input.baseUrl);
  if (keyNeeded) missing.push('EDGERL_JUDGE_API_KEY');
  if (missing.length > 0) {
    const why = keyNeeded ? '; any key value works for a remote server that checks none' : '';
    problems.unshift(`set ${missing.join(', ')} (the judge's OpenAI-compatible endpoint${why})`);
  }
  if (problems.length > 0) throw new RulerConfigError(`RULER judge not configured: ${problems.join('; ')}`);
  return resolveRulerConfig(input as RulerConfigInput);
}

function readWeights(env: Readonly<Record<string, string | undefined>>, problems: string[]) {
  const judge = env.EDGERL_RULER_JUDGE_WEIGHT?.trim();
  const verifier = env.EDGERL_RULER_VERIFIER_WEIGHT?.trim();
  if (!judge && !verifier) return undefined;
  const weights = {
    judge: judge ? Number(judge) : DEFAULT_REWARD_WEIGHTS.judge,
    verifier: verifier ? Number(verifier) : DEFAULT_REWARD_WEIGHTS.verifier,
  };
  if (!Number.isFinite(weights.judge))
    problems.push(`EDGERL_RULER_JUDGE_WEIGHT must be a number, got "${judge}"`);
  if (!Number.isFinite(weights.verifier))
    problems.push(`EDGERL_RULER_VERIFIER_WEIGHT must be a number, got "${verifier}"`);
  return weights;
}

function isLocalUrl(url: string): boolean {
  try {
    return ['localhost', '127.0.0.1', '[::1]'].includes(new URL(url).hostname);
  } catch {
    return false;
  }
}
