// Mixes the judge's score with the environment's verifier reward: reward = w_judge·score + w_verifier·
// verifier. Pure. Both components and the weights are returned with the sum, so the stored row shows
// where a reward came from. Weights are not normalised: GRPO re-centres (and optionally rescales) the
// rewards inside each group (DeepSeekMath, arXiv:2402.03300 §4.1.2), so only their ratio matters;
// ART leaves the mix to the user (its docs add `independent_reward` back by hand, notes §2.4).

export interface RewardWeights {
  /** Weight of the RULER score (0–1). */
  readonly judge: number;
  /** Weight of the environment's verifier reward (any scale the environment uses). */
  readonly verifier: number;
}

/** Judge only, like RULER upstream, which replaces the reward with the score. */
export const DEFAULT_REWARD_WEIGHTS: RewardWeights = { judge: 1, verifier: 0 };

export interface RewardComponents {
  readonly judgeScore?: number;
  readonly verifierReward?: number;
}

export interface CombinedReward {
  readonly reward: number;
  readonly judgeScore?: number;
  readonly verifierReward?: number;
  readonly weights: RewardWeights;
}

export type CombineResult = { ok: true; value: CombinedReward } | { ok: false; error: string };

/** A component may be absent only when its weight is 0; a weighted component must be a finite number. */
export function combineRewards(components: RewardComponents, weights: RewardWeights): CombineResult {
  if (!Number.isFinite(weights.judge) || !Number.isFinite(weights.verifier)) {
    return { ok: false, error: `reward weights must be finite numbers, got ${JSON.stringify(weights)}` };
  }
  const { judgeScore, verifierReward } = components;
  for (const [name, value, weight] of [
    ['judge score', judgeScore, weights.judge],
    ['verifier reward', verifierReward, weights.verifier],
  ] as const) {
    if (value === undefined && weight !== 0)
      return { ok: false, error: `${name} is missing but weighted ${weight}` };
    if (value !== undefined && !Number.isFinite(value)) return { ok: false, error: `${name} is ${value}` };
  }
  const reward = weights.judge * (judgeScore ?? 0) + weights.verifier * (verifierReward ?? 0);
  return { ok: true, value: { reward, judgeScore, verifierReward, weights } };
}
