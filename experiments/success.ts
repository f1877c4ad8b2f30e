// The one success rule of A/B reports (`edgerl ab report`, `edgerl ab promote`, the demo): which
// ended trajectories enter the reward statistics, and which rewards are successes. Pure.
//
// Counted: a trajectory that finished or was truncated and has a reward. Left out: trajectories that
// ended in an infrastructure error (the trainer leaves them out of its groups too, group-rewards.ts,
// conventions §8), even if some reward was written on them, and trajectories without a reward (an
// environment with no verifier before anything scored it). A missing reward is "not measured", not
// "failed": counting it as 0 would make an arm look worse for traffic nobody has scored yet, and the
// trainer likewise skips a group with no verifier reward instead of training it on zeros.
//
// Success: a reward of exactly 1, and a success rate only where every counted reward is 0 or 1. The
// verifier's reward is 0 or 1 for pass/fail environments (multi-hop) and always in [0, 1]
// (score-episode.ts refuses anything else), so there `>= 1` and `=== 1` are the same rule. They differ
// only for rewards above 1, which only a combined reward can be (w_judge·score + w_verifier·verifier,
// weights not normalised: combine-rewards.ts). For such rewards 1 is no pass mark (with weights
// 0.7/0.3 a correct answer scores below 1; with 1/1 a wrong one can score 1), so no success rate is
// reported at all and mean rewards are compared instead (build-ab-report.ts), rather than a count
// of rewards at or above an arbitrary threshold.
import type { EndedOutcome } from '../db/store.ts';

/** The rewards that enter an arm's statistics, in the order given. */
export function countedRewards(ended: readonly EndedOutcome[]): number[] {
  return ended.flatMap((trajectory) =>
    trajectory.status !== 'error' && trajectory.reward !== null ? [trajectory.reward] : [],
  );
}

export function isSuccess(reward: number): boolean {
  return reward === 1;
}

/** Every reward is 0 or 1, and there is at least one: the only case where a success rate means something. */
export function successRateApplies(rewards: readonly number[]): boolean {
  return rewards.length > 0 && rewards.every((reward) => reward === 0 || reward === 1);
}

export function countSuccesses(rewards: readonly number[]): number {
  return rewards.filter(isSuccess).length;
}
