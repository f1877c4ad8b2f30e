// What scoring a group returns: scores matched to trajectory ids with their provenance, or the reason
// the group stays unscored. A failed judging never produces scores: the caller marks the group
// `unscored` and does not train on it.
import type { JudgeFailureCode } from './judge-with-retries.ts';
import type { UsageTally } from './usage-tally.ts';

export interface TrajectoryScore {
  readonly trajectoryId: string;
  /** In [0, 1]: the mean over the K orderings. */
  readonly score: number;
  /** The judge's reasons, from the first ordering. */
  readonly explanation: string;
  /** The score each ordering gave, in ordering order (one entry for an identical group). */
  readonly orderingScores: readonly number[];
}

interface Provenance {
  readonly judgeModel: string;
  /** SHA-256 of the trimmed rubric text. */
  readonly rubricHash: string;
  /** The cache key: judge, rubric, settings, tools and trajectories (group-hash.ts). */
  readonly groupHash: string;
  /** Tokens of every call made for this result, failed attempts included. */
  readonly usage: UsageTally;
  /** Estimated USD for `usage`; absent when no price is configured. */
  readonly costUsd?: number;
}

export interface ScoredGroup extends Provenance {
  readonly status: 'scored';
  /** One per trajectory, in the order of the input group. */
  readonly scores: readonly TrajectoryScore[];
  /** True when the scores do not differ (or there is one trajectory): GRPO learns nothing from it. */
  readonly noSignal: boolean;
  /** Human-readable remarks: identical group, cache hit, retries, fallbacks, disagreement between orders. */
  readonly notes: readonly string[];
  /** Judge requests made (0 on a cache hit). */
  readonly calls: number;
  /** Served from the cache; `usage` and `costUsd` are then those of the original judging. */
  readonly cached: boolean;
}

export interface UnscoredGroup extends Provenance {
  readonly status: 'unscored';
  readonly code: JudgeFailureCode;
  /** One line naming what went wrong, for the store and the CLI. */
  readonly reason: string;
  /** Judge requests made before giving up. */
  readonly attempts: number;
  /** One line per failed attempt. */
  readonly history: readonly string[];
}

export type ScoreGroupResult = ScoredGroup | UnscoredGroup;
