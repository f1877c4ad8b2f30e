// Each trajectory's group-relative advantage as the trainer computes it (trainer/grpo/advantages.ts,
// on the usable trajectories' final reward, else the verifier's), with the scaling of the run that
// trained the group, or the trainer's default (none: reward − group mean; trainer/grpo/loss-config.ts).
import type { Trajectory } from '../../db/schema/trajectories.ts';
import { groupAdvantages, type RewardScaling } from '../../trainer/grpo/advantages.ts';
import { isUsableTrajectory } from '../../trainer/ruler/usable-trajectory.ts';

export interface GroupAdvantageView {
  readonly scale: RewardScaling;
  /** Where the scaling came from: the training run's configuration, or the trainer's default. */
  readonly scaleFrom: 'run' | 'default';
  /** By trajectory id; trajectories left out (running, error, no reward) are absent. */
  readonly advantages: Record<string, number>;
  readonly mean: number | null;
  readonly std: number | null;
  readonly noSignal: boolean;
}

const scalings: readonly RewardScaling[] = ['group', 'none'];

/** `runConfig`: the training run's stored configuration (its `loss.scaleRewards`), when the group was trained. */
export function advantagesOf(
  trajectories: readonly Trajectory[],
  runConfig: Record<string, unknown> | undefined,
): GroupAdvantageView {
  const configured = (runConfig?.loss as { scaleRewards?: unknown } | undefined)?.scaleRewards;
  const fromRun = scalings.find((scale) => scale === configured);
  const scale = fromRun ?? 'none';
  const rewarded = trajectories
    .filter((trajectory) =>
      // turn_count is kept by every append; usable needs "some turns", so one stands for them.
      isUsableTrajectory({ status: trajectory.status, turns: trajectory.turnCount > 0 ? [true] : [] }),
    )
    .map((trajectory) => ({ id: trajectory.id, reward: trajectory.finalReward ?? trajectory.verifierReward }))
    .filter((entry): entry is { id: string; reward: number } => entry.reward !== null);
  const base = { scale, scaleFrom: fromRun ? ('run' as const) : ('default' as const) };
  if (rewarded.length === 0) return { ...base, advantages: {}, mean: null, std: null, noSignal: true };
  const result = groupAdvantages(
    rewarded.map((entry) => entry.reward),
    { scale },
  );
  return {
    ...base,
    advantages: Object.fromEntries(
      rewarded.map((entry, index) => [entry.id, result.advantages[index] as number]),
    ),
    mean: result.mean,
    std: result.std,
    noSignal: result.noSignal,
  };
}
