// Group-relative advantages: each episode's reward minus its group's mean, optionally divided by the
// group's standard deviation. Plain numbers in, plain numbers out; the batch-level |A| normalisation
// ART applies later (its tokenize.py) is deliberately left out.
//
// Formula: DeepSeekMath (Shao et al. 2024, arXiv:2402.03300) §4.1.2, outcome supervision:
//   Â_i = (r_i − mean(r)) / std(r).
// Dr. GRPO (Liu et al. 2025, arXiv:2503.20783) drops the std division, because it up-weights groups
// whose rewards barely differ (near-ties of a noisy judge): that is `scale: 'none'`.
// std is the population std (divide by n), as ART does (OpenPipe/ART src/art/preprocessing/tokenize.py).

export type RewardScaling = 'group' | 'none';
import { errorMessage } from '../../protocol/error-message.ts';

export interface AdvantageOptions {
  /** 'group': divide by the group's population std (DeepSeekMath); 'none': mean-centre only (Dr. GRPO). */
  readonly scale: RewardScaling;
  /** Added to the std before dividing; ART uses 1e-6 (TRL 1e-4). */
  readonly eps?: number;
  /** Rewards whose max − min is within this are "no spread": the group carries no signal. */
  readonly noSignalTolerance?: number;
}

export interface GroupAdvantages {
  /** One advantage per reward, same order. All zeros when `noSignal`. */
  readonly advantages: number[];
  readonly mean: number;
  /** Population std of the rewards. */
  readonly std: number;
  /** True when the rewards do not differ (or the group has one episode): nothing to learn from. */
  readonly noSignal: boolean;
}

export const defaultAdvantageEps = 1e-6;
export const defaultNoSignalTolerance = 1e-9;

export function groupAdvantages(rewards: readonly number[], options: AdvantageOptions): GroupAdvantages {
  const eps = options.eps ?? defaultAdvantageEps;
  const tolerance = options.noSignalTolerance ?? defaultNoSignalTolerance;
  if (rewards.length === 0) throw new RangeError('groupAdvantages: the group has no rewards');
  if (!(eps >= 0)) throw new RangeError(`groupAdvantages: eps must be a number >= 0, got ${eps}`);
  rewards.forEach((reward, index) => {
    if (!Number.isFinite(reward)) {
      throw new RangeError(`groupAdvantages: reward ${index} is not a finite number (${reward})`);
    }
  });

  const n = rewards.length;
  const mean = rewards.reduce((sum, reward) => sum + reward, 0) / n;
  const std = Math.sqrt(rewards.reduce((sum, reward) => sum + (reward - mean) ** 2, 0) / n);
  const spread = Math.max(...rewards) - Math.min(...rewards);
  if (spread <= tolerance) {
    return { advantages: rewards.map(() => 0), mean, std, noSignal: true };
  }
  const divisor = scaleDivisors[options.scale](std, eps);
  return { advantages: rewards.map((reward) => (reward - mean) / divisor), mean, std, noSignal: false };
}

const scaleDivisors = {
  group: (std: number, eps: number) => std + eps,
  none: () => 1,
} satisfies Record<RewardScaling, (std: number, eps: number) => number>;

export interface RewardGroup<Id> {
  readonly id: Id;
  readonly rewards: readonly number[];
}

export interface BatchAdvantages<Id> {
  /** Per group, in input order, with its rewards and stats for the step record. */
  readonly groups: (GroupAdvantages & { readonly id: Id; readonly rewards: readonly number[] })[];
  /** Ids of the groups with signal: only their episodes should be trained on. */
  readonly used: Id[];
  /** Ids of the groups without spread: recorded, not trained on (they would only dilute the normaliser). */
  readonly noSignal: Id[];
}

/** Advantages for many groups at once, keeping which ones carry no signal. */
export function batchAdvantages<Id>(
  groups: readonly RewardGroup<Id>[],
  options: AdvantageOptions,
): BatchAdvantages<Id> {
  const results = groups.map((group) => {
    try {
      return { id: group.id, rewards: [...group.rewards], ...groupAdvantages(group.rewards, options) };
    } catch (error) {
      throw new RangeError(`group ${String(group.id)}: ${errorMessage(error)}`, { cause: error });
    }
  });
  return {
    groups: results,
    used: results.filter((group) => !group.noSignal).map((group) => group.id),
    noSignal: results.filter((group) => group.noSignal).map((group) => group.id),
  };
}
