// Scores one stored group and writes the outcome through the sink: per-trajectory rows (judge score,
// verifier reward, combined reward, provenance, token and cost shares) and `scored`, or `unscored`
// with the reason. The trainer and `edgerl score` both go through here.
import { combineRewards, type CombinedReward } from './combine-rewards.ts';
import type { JudgeGroup } from './judge-group.ts';
import type { JudgeScoreRecord, JudgeScoreSink } from './judge-score-sink.ts';
import { type ScoreGroupDeps, scoreGroup } from './score-group.ts';
import type { ScoredGroup, ScoreGroupResult, TrajectoryScore } from './score-group-result.ts';

export interface ScoreAndRecordDeps extends ScoreGroupDeps {
  readonly sink: JudgeScoreSink;
}

export interface StoredGroup extends JudgeGroup {
  readonly groupId: string;
  /** The environment's verifier reward per trajectory id, when it computed one. */
  readonly verifierRewards?: Readonly<Record<string, number>>;
}

export type ScoreAndRecordResult =
  | {
      readonly status: 'scored';
      readonly result: ScoreGroupResult;
      readonly records: readonly JudgeScoreRecord[];
    }
  | { readonly status: 'unscored'; readonly result: ScoreGroupResult; readonly reason: string };

export async function scoreAndRecordGroup(
  group: StoredGroup,
  deps: ScoreAndRecordDeps,
): Promise<ScoreAndRecordResult> {
  const result = await scoreGroup(group, deps);
  const { sink, config } = deps;
  if (result.status === 'unscored') {
    const { code, attempts, history, judgeModel, rubricHash, groupHash, usage, costUsd } = result;
    await sink.markUnscored(group.groupId, result.reason, {
      code,
      attempts,
      history,
      judgeModel,
      rubricHash,
      groupHash,
      usage,
      ...(costUsd !== undefined ? { costUsd } : {}),
    });
    return { status: 'unscored', result, reason: result.reason };
  }

  const count = result.scores.length;
  // A cache hit spent nothing: its rows carry zero tokens and cost, so summing a table never counts
  // one judging twice (the original rows already carry it).
  const promptShares = apportion(result.cached ? 0 : result.usage.promptTokens, count);
  const completionShares = apportion(result.cached ? 0 : result.usage.completionTokens, count);
  const records: JudgeScoreRecord[] = [];
  const problems: string[] = [];
  result.scores.forEach((score, index) => {
    const combined = combineRewards(
      { judgeScore: score.score, verifierReward: group.verifierRewards?.[score.trajectoryId] },
      config.rewardWeights,
    );
    if (!combined.ok) {
      problems.push(`${score.trajectoryId}: ${combined.error}`);
      return;
    }
    records.push(
      toRecord(score, combined.value, result, promptShares[index] ?? 0, completionShares[index] ?? 0),
    );
  });

  if (problems.length > 0) {
    const reason = `cannot combine rewards: ${problems.join('; ')}`;
    const { judgeModel, rubricHash, groupHash, usage, costUsd } = result;
    await sink.markUnscored(group.groupId, reason, {
      code: 'reward-combination',
      attempts: result.calls,
      history: [],
      judgeModel,
      rubricHash,
      groupHash,
      usage,
      ...(costUsd !== undefined ? { costUsd } : {}),
    });
    return { status: 'unscored', result, reason };
  }

  await sink.recordScores(group.groupId, records, {
    noSignal: result.noSignal,
    notes: result.notes,
    cached: result.cached,
    calls: result.calls,
    usage: result.usage,
    ...(result.costUsd !== undefined ? { costUsd: result.costUsd } : {}),
  });
  return { status: 'scored', result, records };
}

function toRecord(
  score: TrajectoryScore,
  combined: CombinedReward,
  scored: ScoredGroup,
  promptTokens: number,
  completionTokens: number,
): JudgeScoreRecord {
  return {
    trajectoryId: score.trajectoryId,
    judgeScore: score.score,
    explanation: score.explanation,
    ...(combined.verifierReward !== undefined ? { verifierReward: combined.verifierReward } : {}),
    reward: combined.reward,
    weights: combined.weights,
    judgeModel: scored.judgeModel,
    rubricHash: scored.rubricHash,
    groupHash: scored.groupHash,
    promptTokens,
    completionTokens,
    ...(scored.costUsd !== undefined
      ? { costUsd: scored.cached ? 0 : scored.costUsd / scored.scores.length }
      : {}),
    orderingScores: score.orderingScores,
  };
}

/** Splits an integer total into `parts` integers that differ by at most 1 and sum to the total. */
export function apportion(total: number, parts: number): number[] {
  const base = Math.floor(total / parts);
  const remainder = total - base * parts;
  return Array.from({ length: parts }, (_, index) => base + (index < remainder ? 1 : 0));
}
