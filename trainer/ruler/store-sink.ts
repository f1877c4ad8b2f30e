// The trajectory store behind RULER's JudgeScoreSink: judge rows + `scored` (recordJudgeScores) and the
// combined reward (setFinalRewards) in one transaction, or `unscored` with the reason. What the store
// has no column for yet (group hash, per-ordering scores, notes, no-signal flag) is not persisted.
import { toStoreError } from '../../db/database-errors.ts';
import type { Store } from '../../db/store.ts';
import { markGroupUnscored, recordJudgeScores } from '../../db/store/record-judge-scores.ts';
import { setFinalRewards } from '../../db/store/set-final-rewards.ts';
import type { JudgeScoreSink } from './judge-score-sink.ts';

/** The store's limits on free text (db/store/record-judge-scores.ts). */
const EXPLANATION_LIMIT = 20_000;
const REASON_LIMIT = 2_000;

export function storeJudgeScoreSink(store: Pick<Store, 'db'>): JudgeScoreSink {
  return {
    async recordScores(groupId, records) {
      const first = records[0];
      if (!first) throw new RangeError(`recordScores: group ${groupId} has no scores to record`);
      try {
        // One transaction, so a group is never `scored` without its final rewards.
        await store.db.transaction(async (tx) => {
          await recordJudgeScores(tx, {
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
            })),
          });
          await setFinalRewards(tx, {
            rewards: records.map((record) => ({
              trajectoryId: record.trajectoryId,
              finalReward: record.reward,
            })),
          });
        });
      } catch (error) {
        throw toStoreError(error);
      }
    },
    async markUnscored(groupId, reason) {
      try {
        await markGroupUnscored(store.db, { groupId, reason: clip(reason, REASON_LIMIT) });
      } catch (error) {
        throw toStoreError(error);
      }
    },
  };
}

function clip(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}
