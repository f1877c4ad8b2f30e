// The GRPO trainer's loss and optimiser settings as one zod schema: each default written once with its
// meaning and source, the CLI flag that sets it, and cross-field checks whose messages say how to fix
// the value. The entry point (CLI flags, a config file) builds the partial input; this never reads env.
import { z } from 'zod';
import { documented, parseConfig } from '../../protocol/config-docs.ts';
import { ConfigError } from '../../protocol/config-error.ts';
import { numberWhere, oneOf } from '../../protocol/config-fields.ts';
import type { RewardScaling } from './advantages.ts';
import type { Aggregation } from './aggregate.ts';
import type { ClipBounds, LossKind } from './losses.ts';
import { withoutUndefined } from '../../protocol/without-undefined.ts';

/** Clip bands per loss kind. */
export const clipDefaults = {
  // DAPO clip-higher (arXiv:2503.14476 §3.1): ε_low 0.2, ε_high 0.28. ART uses 0.2 / 0.2.
  'ppo-clip': { low: 0.2, high: 0.28 },
  // ART's CISPO ε 1.0 / ε_high 4.0, i.e. weight ∈ [0, 5] (TRL writes the same cap as epsilon_high = 5).
  cispo: { low: 1.0, high: 4.0 },
} satisfies Record<LossKind, ClipBounds>;

// Closed lists for validating untyped input; `satisfies Record<…>` makes each one exhaustive.
const names = <T extends string>(table: Record<T, 1>) => Object.keys(table) as [T, ...T[]];
const lossKinds = names<LossKind>({ 'ppo-clip': 1, cispo: 1 });
const aggregations = names<Aggregation>({ 'token-mean': 1, 'sequence-mean': 1 });
const scalings = names<RewardScaling>({ group: 1, none: 1 });

const loss = 'Loss and optimiser';

const clipSchema = z
  .strictObject({
    low: documented(
      numberWhere(
        (low) => low >= 0 && low <= 1,
        'in [0, 1] so the lower ratio bound 1 − low is >= 0',
      ).optional(),
      {
        doc: 'ratio band [1 − low, 1 + high], lower side',
        shownDefault: 'cispo 1.0, ppo-clip 0.2',
        flag: 'clip-low',
        arg: 'X',
        section: loss,
      },
    ),
    high: documented(
      numberWhere((high) => high >= 0 && Number.isFinite(high), 'a finite number >= 0').optional(),
      {
        doc: 'ratio band [1 − low, 1 + high], upper side',
        shownDefault: 'cispo 4.0, ppo-clip 0.28',
        source: 'DAPO clip-higher for ppo-clip; ART for cispo',
        flag: 'clip-high',
        arg: 'X',
        section: loss,
      },
    ),
  })
  .prefault({});

export const lossConfigSchema = z
  .strictObject({
    lossKind: documented(oneOf(lossKinds).default('cispo'), {
      doc: 'token loss',
      source:
        "ART's default (src/art/local/backend.py); unlike PPO it never zeroes a token's gradient, it bounds the weight (MiniMax-M1 §3.1), which suits edge rollouts that arrive a few policy versions late",
      flag: 'loss',
      arg: 'KIND',
      section: loss,
    }),
    /** Ratio band; each side defaults to the chosen kind's (`clipDefaults`). */
    clip: clipSchema,
    aggregation: documented(oneOf(aggregations).default('token-mean'), {
      doc: 'how token losses add up to the step loss',
      source: "DAPO §3.3; TRL's default `dapo`, verl's token-mean",
      flag: 'aggregation',
      arg: 'MODE',
      section: loss,
    }),
    scaleRewards: documented(oneOf(scalings).default('none'), {
      doc: 'none: advantage = reward − group mean; group: also ÷ group std',
      source:
        'Dr. GRPO (arXiv:2503.20783) and prime-rl; std division amplifies near-ties of an LLM judge (ART, TRL and verl default to group)',
      flag: 'scale-rewards',
      arg: 'MODE',
      section: 'Rewards and advantages',
    }),
    advantageEps: documented(numberWhere((eps) => eps >= 0, '>= 0').default(1e-6), {
      doc: 'added to the group std before dividing (only with scale-rewards group)',
      source: 'ART',
    }),
    beta: documented(numberWhere((beta) => beta >= 0 && Number.isFinite(beta), '>= 0').default(0), {
      doc: 'k3 KL coefficient against the base model (adapter off)',
      source: 'ART, TRL, verl, slime (no reference forward pass is needed)',
      flag: 'beta',
      arg: 'X',
      section: loss,
    }),
    learningRate: documented(numberWhere((rate) => rate > 0 && Number.isFinite(rate), '> 0').default(5e-6), {
      doc: 'AdamW learning rate, per step',
      source: 'ART `backend.train` (its PipelineTrainer uses 1e-5)',
      flag: 'lr',
      arg: 'X',
      section: loss,
    }),
    weightDecay: documented(numberWhere((decay) => decay >= 0, '>= 0').default(0.1), {
      doc: 'AdamW decoupled weight decay λ',
      source: "ART's RL optimiser settings (OpenPipe/ART get_model_config.py)",
      flag: 'weight-decay',
      arg: 'X',
      section: loss,
    }),
    adamBeta1: documented(numberWhere((beta) => beta >= 0 && beta < 1, 'in [0, 1)').default(0.9), {
      doc: 'Adam β1',
      source: 'ART / PyTorch',
    }),
    adamBeta2: documented(numberWhere((beta) => beta >= 0 && beta < 1, 'in [0, 1)').default(0.99), {
      doc: 'Adam β2',
      source: "ART (PyTorch's 0.999 reacts slower to the shifting RL gradient)",
    }),
    adamEps: documented(numberWhere((eps) => eps > 0, '> 0').default(1e-8), {
      doc: 'Adam ε',
      source: 'PyTorch AdamW default',
    }),
    maxGradNorm: documented(
      numberWhere((norm) => norm > 0, '> 0 (Infinity disables clipping)').default(1.0),
      {
        doc: 'global gradient-norm clip (Infinity: none)',
        source:
          'TRL GRPOConfig / transformers TrainingArguments (ART uses 0.1 after normalising |A| to 1 per batch, which edgerl does not do)',
        flag: 'max-grad-norm',
        arg: 'X',
        section: loss,
      },
    ),
    microBatchTokens: documented(
      numberWhere((tokens) => Number.isInteger(tokens) && tokens > 0, 'an integer > 0').default(8192),
      {
        doc: 'padded tokens (sequences × longest) per forward/backward pass: bounds activation memory; micro-batches add up to the same gradient whatever the size (aggregate.ts)',
        source: 'an edgerl choice sized for a 0.5B model on CPU/wasm; raise it on a GPU',
        flag: 'micro-batch-tokens',
        arg: 'N',
        section: loss,
      },
    ),
  })
  .superRefine(
    (config, context) => {
      const { learningRate, weightDecay } = config;
      if (
        typeof learningRate === 'number' &&
        typeof weightDecay === 'number' &&
        learningRate * weightDecay >= 1
      ) {
        context.addIssue({
          code: 'custom',
          path: [],
          message: `learningRate × weightDecay = ${learningRate * weightDecay} >= 1 would flip the weights' sign each step: lower one of them`,
        });
      }
    },
    // Cross-field checks run even when a field failed, so every problem is reported at once.
    { when: () => true },
  )
  .transform(({ clip, ...rest }) => ({
    ...rest,
    clip: { ...clipDefaults[rest.lossKind], ...withoutUndefined(clip) } as ClipBounds,
  }));

export type LossConfigInput = z.input<typeof lossConfigSchema>;
export type LossConfig = z.output<typeof lossConfigSchema>;

/** Bad settings, one message per problem, each naming the field and how to fix it. */
export class LossConfigError extends ConfigError {
  override readonly name = 'LossConfigError';
  readonly code = 'invalid-loss-config';
  constructor(issues: readonly string[]) {
    super(issues, 'invalid loss config: ');
  }
}

/** Fills defaults (the clip band from the chosen kind's) and validates; throws LossConfigError. */
export function resolveLossConfig(input: LossConfigInput = {}): LossConfig {
  return parseConfig(lossConfigSchema, input, (issues) => new LossConfigError(issues), 'path');
}

/** Every default, from the schema (the clip band is the default kind's). */
export const lossConfigDefaults: LossConfig = resolveLossConfig();
