// The trajectory store behind RULER's JudgeScoreSink: judge rows + `scored` (recordJudgeScores) and the
// combined reward (setFinalRewards) in one transaction, or `unscored` with the reason. Each row keeps
// its provenance (group hash, per-ordering scores, weights, notes) in judge_scores.details; an
// unscored judging's detail is not persisted beyond the group's status reason.
import type { Store } from '../../db/store.ts';
import type { ScoreRetryPolicy } from '../../protocol/score-retry.ts';
import type { JudgeScoreSink } from './judge-score-sink.ts';

/** The store's limits on free text (db/store/record-judge-scores.ts). */
const EXPLANATION_LIMIT = 20_000;
const REASON_LIMIT = 2_000;
/** judge_scores.details.notes holds at most this many (protocol/judge-score-details.ts). */
const NOTES_LIMIT = 100;

export function storeJudgeScoreSink(
  store: Pick<Store, 'transaction' | 'markGroupUnscored'>,
  /** Judgings a group gets and the waits between them; the store's default when absent. */
  retry?: ScoreRetryPolicy,
): JudgeScoreSink {
  return {
    async recordScores(groupId, records, summary) {
      const notes = summary.notes.slice(0, NOTES_LIMIT).map((note) => clip(note, REASON_LIMIT));
      const first = records[0];
      if (!first) throw new RangeError(`recordScores: group ${groupId} has no scores to record`);
      // One transaction, so a group is never `scored` without its final rewards.
      await store.transaction(async (tx) => {
        await tx.recordJudgeScores({
          groupId,
          judgeModel: first.judgeModel,
          rubricHash: first.rubricHash,
          scores: records.map((record) => ({
            trajectoryId: record.trajectoryId,
            score: record.judgeScore,
            explanation: clip(record.explanation, EXPLANATION_LIMIT),
            promptTokens: record.promptTokens,
            completionTokens: record.completionTokens,
            ...(record.costUsd !== undefined ? { costUsd: record.costUsd } : {}),
            details: {
              groupHash: record.groupHash,
              orderingScores: [...record.orderingScores],
              ...(record.verifierReward !== undefined ? { verifierReward: record.verifierReward } : {}),
              weights: { judge: record.weights.judge, verifier: record.weights.verifier },
              reward: record.reward,
              cached: summary.cached,
              noSignal: summary.noSignal,
              notes,
            },
          })),
        });
        await tx.setFinalRewards({
          rewards: records.map((record) => ({
            trajectoryId: record.trajectoryId,
            finalReward: record.reward,
          })),
        });
      });
    },
    async markUnscored(groupId, reason) {
      await store.markGroupUnscored({
        groupId,
        reason: clip(reason, REASON_LIMIT),
        ...(retry ? { retry } : {}),
      });
    },
  };
}

function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}
