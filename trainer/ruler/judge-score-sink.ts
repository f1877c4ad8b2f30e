// The port through which RULER's results reach the trajectory store: per-trajectory score rows and
// the group's final status. The store adapter implements it (store-sink.ts); tests use a recording
// fake. Kept to plain data so the adapter is a thin mapping.
import type { JudgeFailureCode } from './judge-with-retries.ts';
import type { RewardWeights } from './combine-rewards.ts';
import type { UsageTally } from './usage-tally.ts';

/** One row per trajectory: the score, where it came from, what it cost, and the combined reward. */
export interface JudgeScoreRecord {
  readonly trajectoryId: string;
  /** RULER score in [0, 1] (mean over the orderings). */
  readonly judgeScore: number;
  readonly explanation: string;
  /** The environment's verifier reward, when it has one. */
  readonly verifierReward?: number;
  /** weights.judge · judgeScore + weights.verifier · verifierReward: what GRPO trains on. */
  readonly reward: number;
  readonly weights: RewardWeights;
  readonly judgeModel: string;
  readonly rubricHash: string;
  readonly groupHash: string;
  /** This trajectory's share of the group's judge tokens (the shares sum to the group's total); 0 on a cache hit. */
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** This trajectory's share of the estimated cost, when prices are configured; 0 on a cache hit. */
  readonly costUsd?: number;
  readonly orderingScores: readonly number[];
}

export interface GroupScoreSummary {
  readonly noSignal: boolean;
  readonly notes: readonly string[];
  /** The scores came from the cache: the rows repeat an earlier judging, with zero tokens and cost. */
  readonly cached: boolean;
  readonly calls: number;
  readonly usage: UsageTally;
  readonly costUsd?: number;
}

export interface UnscoredDetail {
  readonly code: JudgeFailureCode | 'reward-combination';
  readonly attempts: number;
  readonly history: readonly string[];
  readonly judgeModel: string;
  readonly rubricHash: string;
  readonly groupHash: string;
  readonly usage: UsageTally;
  readonly costUsd?: number;
}

export interface JudgeScoreSink {
  /** Store every trajectory's row and mark the group `scored` (one transaction in a real store). */
  recordScores(
    groupId: string,
    records: readonly JudgeScoreRecord[],
    summary: GroupScoreSummary,
  ): Promise<void>;
  /** Mark the group `unscored` with the reason; it keeps its trajectories and is not trained on. */
  markUnscored(groupId: string, reason: string, detail: UnscoredDetail): Promise<void>;
}
