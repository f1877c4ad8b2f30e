// Recording a judge's scores for a group (RULER scores a whole group in one call): one judge_scores
// row per trajectory, trajectories.judge_score set to the new score, and the group marked `scored`.
// A judge that failed after its retries goes through markGroupUnscored instead.
import { and, eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import { judgeScoreDetailsSchema } from '../../protocol/judge-score-details.ts';
import {
  defaultScoreRetry,
  scoreAttemptsExhausted,
  scoreRetryDelaySeconds,
} from '../../protocol/score-retry.ts';
import { mapStrings, storableMessage } from '../../protocol/stored-text.ts';
import { StoreError } from '../errors.ts';
import { judgeScores } from '../schema/judge-scores.ts';
import { type RolloutGroup, rolloutGroups } from '../schema/rollout-groups.ts';
import { trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { id, nonNegativeInt4 } from './fields.ts';
import { assertGroupMove } from './group-transitions.ts';
import { lockGroup } from './lock-group.ts';
import { parseInput } from './parse-input.ts';

const scoreSchema = z.object({
  trajectoryId: id,
  score: z.number(),
  explanation: z.string().max(20_000).optional(),
  promptTokens: nonNegativeInt4.optional(),
  completionTokens: nonNegativeInt4.optional(),
  costUsd: z.number().nonnegative().optional(),
  details: judgeScoreDetailsSchema.optional(),
});

export const recordJudgeScoresSchema = z.object({
  groupId: id,
  judgeModel: z.string().min(1).max(200),
  rubricHash: z.string().min(1).max(200),
  scores: z
    .array(scoreSchema)
    .min(1)
    .superRefine((scores, ctx) => {
      const seen = new Set<string>();
      scores.forEach((score, index) => {
        if (seen.has(score.trajectoryId)) {
          ctx.addIssue({ code: 'custom', path: [index, 'trajectoryId'], message: 'scored twice' });
        }
        seen.add(score.trajectoryId);
      });
    }),
});
export type RecordJudgeScoresInput = z.input<typeof recordJudgeScoresSchema>;

export async function recordJudgeScores(db: StoreDb, input: RecordJudgeScoresInput): Promise<RolloutGroup> {
  // A judge is a model too: its explanations are shown with NULs and lone surrogates spelled out
  // (protocol/stored-text.ts storableMessage), never a reason to leave the group unscored.
  const judged = parseInput(recordJudgeScoresSchema, input, 'recordJudgeScores', { keepText: ['scores'] });
  return db.transaction(async (tx) => {
    const group = await lockGroup(tx, judged.groupId);
    assertGroupMove(group.id, group.status, 'scored');
    const ids = judged.scores.map((score) => score.trajectoryId);
    const members = await tx
      .select({ id: trajectories.id })
      .from(trajectories)
      .where(and(eq(trajectories.groupId, group.id), inArray(trajectories.id, ids)));
    const memberIds = new Set(members.map((member) => member.id));
    const outsider = judged.scores.findIndex((score) => !memberIds.has(score.trajectoryId));
    if (outsider >= 0) {
      throw new StoreError(
        'validation',
        `recordJudgeScores: scores.${outsider}.trajectoryId: trajectory ${ids[outsider]} is not in group ${group.id}`,
      );
    }
    await tx.insert(judgeScores).values(
      judged.scores.map((score) => ({
        trajectoryId: score.trajectoryId,
        judgeModel: judged.judgeModel,
        rubricHash: judged.rubricHash,
        score: score.score,
        explanation: score.explanation === undefined ? null : storableMessage(score.explanation),
        promptTokens: score.promptTokens ?? null,
        completionTokens: score.completionTokens ?? null,
        costUsd: score.costUsd ?? null,
        details: score.details === undefined ? null : mapStrings(score.details, storableMessage),
      })),
    );
    for (const score of judged.scores) {
      await tx
        .update(trajectories)
        .set({ judgeScore: score.score })
        .where(eq(trajectories.id, score.trajectoryId));
    }
    const [updated] = await tx
      .update(rolloutGroups)
      .set({ status: 'scored', statusReason: null, scoredAt: sql`now()`, nextScoreAt: null })
      .where(eq(rolloutGroups.id, group.id))
      .returning();
    if (!updated) throw new Error('update returned no row');
    return updated;
  });
}

const markGroupUnscoredSchema = z.object({
  groupId: id,
  reason: z.string().min(1).max(2000),
  /** How many judgings a group gets and how long it waits between them (protocol/score-retry.ts). */
  retry: z
    .object({
      maxAttempts: z.number().int().min(1).max(1000),
      baseSeconds: z.number().min(0).max(86_400),
      capSeconds: z
        .number()
        .min(0)
        .max(7 * 86_400),
    })
    .default(defaultScoreRetry),
  /** The jitter's uniform draw in [0, 1); the store draws one when the caller does not. */
  jitter: z.number().min(0).max(1).optional(),
});
export type MarkGroupUnscoredInput = z.input<typeof markGroupUnscoredSchema>;

/**
 * The judge failed after its retries: keep the group, never train on made-up scores. Counts the
 * attempt; while attempts remain the group stays `unscored` until `next_score_at` (claimGroups takes it
 * again after that), and after the last one it ends `failed`, its reason starting
 * `score-attempts-exhausted`.
 */
export async function markGroupUnscored(db: StoreDb, input: MarkGroupUnscoredInput): Promise<RolloutGroup> {
  const failure = parseInput(markGroupUnscoredSchema, input, 'markGroupUnscored', { keepText: ['reason'] });
  const reason = storableMessage(failure.reason);
  return db.transaction(async (tx) => {
    const group = await lockGroup(tx, failure.groupId);
    assertGroupMove(group.id, group.status, 'unscored');
    const attempts = group.scoreAttempts + 1;
    const exhausted = attempts >= failure.retry.maxAttempts;
    const delaySeconds = scoreRetryDelaySeconds(attempts, failure.retry, failure.jitter ?? Math.random());
    const [updated] = await tx
      .update(rolloutGroups)
      .set(
        exhausted
          ? {
              status: 'failed',
              statusReason:
                `${scoreAttemptsExhausted}: the judge failed ${attempts} time(s); last: ${reason}`.slice(
                  0,
                  2000,
                ),
              scoreAttempts: attempts,
              lastScoreError: reason,
              nextScoreAt: null,
              leaseOwner: null,
              leaseExpiresAt: null,
            }
          : {
              status: 'unscored',
              statusReason: reason,
              scoreAttempts: attempts,
              lastScoreError: reason,
              nextScoreAt: sql`now() + ${delaySeconds}::double precision * interval '1 second'`,
            },
      )
      .where(eq(rolloutGroups.id, group.id))
      .returning();
    if (!updated) throw new Error('update returned no row');
    return updated;
  });
}
