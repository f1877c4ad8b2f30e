// The step record's metrics from plain numbers: the groups' rewards and advantages, each micro-batch's
// read-back sums (grpo-loss.ts), the pre-clip gradient norm and the learning rate. Keys use `/`.
// Episode-level stats (reward, advantage) weigh each episode once; token-level ones (clip, ratio, KL)
// weigh each trained token once. Empty denominators give 0, never NaN (JSON has no NaN).
import type { LossSums } from './grpo-loss.ts';

export interface GroupRecord {
  readonly rewards: readonly number[];
  readonly advantages: readonly number[];
  /** Population std of the group's rewards. */
  readonly std: number;
  readonly noSignal: boolean;
}

export interface StepMetricsInput {
  /** Every group of the step, trained on or not. */
  readonly groups: readonly GroupRecord[];
  /** One entry per micro-batch, as read by `readLossSums`. */
  readonly microBatches: readonly LossSums[];
  /** Global gradient norm before clipping. */
  readonly gradNorm: number;
  /** The clip threshold the norm was compared with (Infinity: off). */
  readonly maxGradNorm: number;
  readonly learningRate: number;
}

export type StepMetricKey =
  | 'loss'
  | 'loss/policy'
  | 'reward/mean'
  | 'reward/std'
  | 'reward/group_std_mean'
  | 'advantage/mean'
  | 'advantage/abs_mean'
  | 'advantage/std'
  | 'advantage/min'
  | 'advantage/max'
  | 'ratio/mean'
  | 'clip/low_fraction'
  | 'clip/high_fraction'
  | 'clip/fraction'
  | 'grad/norm'
  | 'grad/clipped'
  | 'lr'
  | 'tokens'
  | 'sequences'
  | 'micro_batches'
  | 'groups/total'
  | 'groups/used'
  | 'groups/no_signal';

/** Present only when reference log-probs were computed. */
export type KlMetricKey = 'kl/mean' | 'loss/kl';

/**
 * Present only with a rollout correction (rollout-correction.ts), over the trained tokens: the
 * truncated weight's mean and max (never above the cap), the share of tokens the cap bound, and the
 * untruncated ratio π_prox / π_sampler's mean and max (how far off-policy the batch was).
 */
export type ImportanceMetricKey =
  | 'is/weight_mean'
  | 'is/weight_max'
  | 'is/truncated_fraction'
  | 'is/ratio_mean'
  | 'is/ratio_max';

export type StepMetrics = Record<StepMetricKey, number> &
  Partial<Record<KlMetricKey | ImportanceMetricKey, number>>;

export function stepMetrics(input: StepMetricsInput): StepMetrics {
  const rewards = input.groups.flatMap((group) => group.rewards);
  const used = input.groups.filter((group) => !group.noSignal);
  const advantages = used.flatMap((group) => group.advantages);
  const total = (key: keyof LossSums) =>
    input.microBatches.reduce((sum, batch) => sum + (batch[key] ?? 0), 0);
  const tokens = total('tokens');
  const perToken = (sum: number) => (tokens > 0 ? sum / tokens : 0);

  const metrics: StepMetrics = {
    loss: total('loss'),
    'loss/policy': total('policyLoss'),
    'reward/mean': mean(rewards),
    'reward/std': populationStd(rewards),
    'reward/group_std_mean': mean(input.groups.map((group) => group.std)),
    'advantage/mean': mean(advantages),
    'advantage/abs_mean': mean(advantages.map(Math.abs)),
    'advantage/std': populationStd(advantages),
    'advantage/min': advantages.length > 0 ? Math.min(...advantages) : 0,
    'advantage/max': advantages.length > 0 ? Math.max(...advantages) : 0,
    'ratio/mean': perToken(total('ratioSum')),
    'clip/low_fraction': perToken(total('clippedLow')),
    'clip/high_fraction': perToken(total('clippedHigh')),
    'clip/fraction': perToken(total('clippedLow') + total('clippedHigh')),
    'grad/norm': input.gradNorm,
    'grad/clipped': input.gradNorm > input.maxGradNorm ? 1 : 0,
    lr: input.learningRate,
    tokens,
    sequences: total('sequences'),
    micro_batches: input.microBatches.length,
    'groups/total': input.groups.length,
    'groups/used': used.length,
    'groups/no_signal': input.groups.length - used.length,
  };
  const withKl = input.microBatches.filter((batch) => batch.klSum !== undefined);
  if (withKl.length > 0) {
    if (withKl.length !== input.microBatches.length) {
      throw new RangeError(
        `KL sums in ${withKl.length} of ${input.microBatches.length} micro-batches: compute them for all or none`,
      );
    }
    metrics['kl/mean'] = perToken(total('klSum'));
    metrics['loss/kl'] = total('loss') - total('policyLoss');
  }
  const corrected = input.microBatches.filter((batch) => batch.isWeightSum !== undefined);
  if (corrected.length > 0) {
    if (corrected.length !== input.microBatches.length) {
      throw new RangeError(
        `importance weights in ${corrected.length} of ${input.microBatches.length} micro-batches: compute them for all or none`,
      );
    }
    const largest = (key: 'isWeightMax' | 'isRatioMax') =>
      Math.max(...input.microBatches.map((batch) => batch[key] ?? 0));
    metrics['is/weight_mean'] = perToken(total('isWeightSum'));
    metrics['is/weight_max'] = largest('isWeightMax');
    metrics['is/truncated_fraction'] = perToken(total('isTruncated'));
    metrics['is/ratio_mean'] = perToken(total('isRatioSum'));
    metrics['is/ratio_max'] = largest('isRatioMax');
  }
  return metrics;
}

function mean(values: readonly number[]): number {
  return values.length > 0 ? values.reduce((sum, value) => sum + value, 0) / values.length : 0;
}

function populationStd(values: readonly number[]): number {
  const average = mean(values);
  return Math.sqrt(mean(values.map((value) => (value - average) ** 2)));
}
