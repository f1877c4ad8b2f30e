// The GRPO trainer's loss and optimiser settings: one typed config, each default written once with its
// meaning and source, and cross-field checks whose messages say how to fix the value. The entry point
// (CLI flags, a config file) builds the partial input; this module never reads env or flags.
import type { RewardScaling } from './advantages.ts';
import type { Aggregation } from './aggregate.ts';
import type { ClipBounds, LossKind } from './losses.ts';
import { withoutUndefined } from '../../protocol/without-undefined.ts';

export interface LossConfig {
  /** Token loss. Default 'cispo': ART's default (src/art/local/backend.py); unlike PPO it never zeroes a
   *  token's gradient, it bounds the weight (MiniMax-M1 §3.1), which suits edge rollouts that arrive a
   *  few policy versions late. */
  readonly lossKind: LossKind;
  /** Ratio band [1 − low, 1 + high]; defaults per kind in `clipDefaults`. */
  readonly clip: ClipBounds;
  /** Default 'token-mean' over the step: DAPO §3.3; TRL's default `dapo`, verl's token-mean. */
  readonly aggregation: Aggregation;
  /** Default 'none' (mean-centre only): Dr. GRPO (arXiv:2503.20783) and prime-rl; std division amplifies
   *  near-ties of an LLM judge. ART, TRL and verl default to 'group'. CLI: --scale-rewards group|none. */
  readonly scaleRewards: RewardScaling;
  /** Added to the group std before dividing (only with scaleRewards 'group'). 1e-6: ART. */
  readonly advantageEps: number;
  /** k3 KL coefficient against the base model (adapter off). 0: ART, TRL, verl, slime (no reference
   *  forward pass is needed). */
  readonly beta: number;
  /** AdamW learning rate, per step. 5e-6: ART `backend.train` (its PipelineTrainer uses 1e-5). */
  readonly learningRate: number;
  /** Decoupled weight decay λ. 0.1: ART's RL optimiser settings (OpenPipe/ART get_model_config.py). */
  readonly weightDecay: number;
  /** Adam β1. 0.9: ART / PyTorch. */
  readonly adamBeta1: number;
  /** Adam β2. 0.99: ART (PyTorch's 0.999 reacts slower to the shifting RL gradient). */
  readonly adamBeta2: number;
  /** Adam ε. 1e-8: PyTorch AdamW default. */
  readonly adamEps: number;
  /** Global gradient-norm clip. 1.0: TRL GRPOConfig / transformers TrainingArguments (ART uses 0.1 after
   *  normalising |A| to 1 per batch, which edgerl does not do). Infinity disables clipping. */
  readonly maxGradNorm: number;
  /** Padded tokens (sequences × longest) per forward/backward: bounds activation memory. 8192: an
   *  edgerl choice sized for a 0.5B model on CPU/wasm; raise it on a GPU. Micro-batches add up to the
   *  same gradient whatever the size (aggregate.ts). */
  readonly microBatchTokens: number;
}

/** Clip bands per loss kind. */
export const clipDefaults = {
  // DAPO clip-higher (arXiv:2503.14476 §3.1): ε_low 0.2, ε_high 0.28. ART uses 0.2 / 0.2.
  'ppo-clip': { low: 0.2, high: 0.28 },
  // ART's CISPO ε 1.0 / ε_high 4.0, i.e. weight ∈ [0, 5] (TRL writes the same cap as epsilon_high = 5).
  cispo: { low: 1.0, high: 4.0 },
} satisfies Record<LossKind, ClipBounds>;

export const lossConfigDefaults = {
  lossKind: 'cispo',
  aggregation: 'token-mean',
  scaleRewards: 'none',
  advantageEps: 1e-6,
  beta: 0,
  learningRate: 5e-6,
  weightDecay: 0.1,
  adamBeta1: 0.9,
  adamBeta2: 0.99,
  adamEps: 1e-8,
  maxGradNorm: 1.0,
  microBatchTokens: 8192,
} as const satisfies Omit<LossConfig, 'clip'>;

// Names for validating untyped input; `satisfies Record<…>` makes each list exhaustive.
const lossKindNames = Object.keys(clipDefaults);
const aggregationNames = Object.keys({ 'token-mean': 1, 'sequence-mean': 1 } satisfies Record<
  Aggregation,
  1
>);
const scalingNames = Object.keys({ group: 1, none: 1 } satisfies Record<RewardScaling, 1>);

/** Bad settings, one message per problem, each naming the field and how to fix it. */
export class LossConfigError extends Error {
  override readonly name = 'LossConfigError';
  readonly code = 'invalid_loss_config';
  constructor(readonly issues: readonly string[]) {
    super(`invalid loss config: ${issues.join('; ')}`);
  }
}

/** Fills defaults (the clip band from the chosen kind's) and validates; throws LossConfigError. */
export function resolveLossConfig(input: Partial<LossConfig> = {}): LossConfig {
  const unknown = Object.keys(input).filter((key) => !(key in lossConfigDefaults) && key !== 'clip');
  const lossKind = input.lossKind ?? lossConfigDefaults.lossKind;
  const kindDefaults = clipDefaults[lossKind] ?? clipDefaults[lossConfigDefaults.lossKind];
  const config: LossConfig = {
    ...lossConfigDefaults,
    ...withoutUndefined(input),
    clip: { ...kindDefaults, ...withoutUndefined(input.clip ?? {}) },
  };
  const issues = [...unknown.map((key) => `unknown setting "${key}"`), ...lossConfigIssues(config)];
  if (issues.length > 0) throw new LossConfigError(issues);
  return config;
}

/** Every problem with a complete config (empty when valid). */
export function lossConfigIssues(config: LossConfig): string[] {
  const issues: string[] = [];
  const oneOf = (field: string, value: string, names: readonly string[]) => {
    if (!names.includes(value)) issues.push(`${field} must be one of ${names.join(', ')}, got "${value}"`);
  };
  oneOf('lossKind', config.lossKind, lossKindNames);
  oneOf('aggregation', config.aggregation, aggregationNames);
  oneOf('scaleRewards', config.scaleRewards, scalingNames);
  const { low, high } = config.clip;
  if (!(low >= 0 && low <= 1)) {
    issues.push(`clip.low must be in [0, 1] so the lower ratio bound 1 − low is >= 0, got ${low}`);
  }
  if (!(high >= 0 && Number.isFinite(high)))
    issues.push(`clip.high must be a finite number >= 0, got ${high}`);
  if (!(config.advantageEps >= 0)) issues.push(`advantageEps must be >= 0, got ${config.advantageEps}`);
  if (!(config.beta >= 0 && Number.isFinite(config.beta)))
    issues.push(`beta must be >= 0, got ${config.beta}`);
  if (!(config.learningRate > 0 && Number.isFinite(config.learningRate))) {
    issues.push(`learningRate must be > 0, got ${config.learningRate}`);
  }
  if (!(config.weightDecay >= 0)) issues.push(`weightDecay must be >= 0, got ${config.weightDecay}`);
  if (config.learningRate * config.weightDecay >= 1) {
    issues.push(
      `learningRate × weightDecay = ${config.learningRate * config.weightDecay} >= 1 would flip the weights' sign ` +
        'each step: lower one of them',
    );
  }
  if (!(config.adamBeta1 >= 0 && config.adamBeta1 < 1)) {
    issues.push(`adamBeta1 must be in [0, 1), got ${config.adamBeta1}`);
  }
  if (!(config.adamBeta2 >= 0 && config.adamBeta2 < 1)) {
    issues.push(`adamBeta2 must be in [0, 1), got ${config.adamBeta2}`);
  }
  if (!(config.adamEps > 0)) issues.push(`adamEps must be > 0, got ${config.adamEps}`);
  if (!(config.maxGradNorm > 0))
    issues.push(`maxGradNorm must be > 0 (Infinity disables clipping), got ${config.maxGradNorm}`);
  if (!(Number.isInteger(config.microBatchTokens) && config.microBatchTokens > 0)) {
    issues.push(`microBatchTokens must be an integer > 0, got ${config.microBatchTokens}`);
  }
  return issues;
}
