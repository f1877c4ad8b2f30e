// Judge scores: one row per trajectory per judging (RULER ranks a whole group in one call; each
// trajectory gets its row). Rows are kept on re-judging; trajectories.judge_score holds the latest.
import type { JudgeScoreDetails } from '../../protocol/judge-score-details.ts';
import { doublePrecision, index, integer, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from './columns.ts';
import { trajectories } from './trajectories.ts';

export const judgeScores = pgTable(
  'judge_scores',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    trajectoryId: uuid('trajectory_id')
      .notNull()
      .references(() => trajectories.id, { onDelete: 'cascade' }),
    judgeModel: text('judge_model').notNull(),
    /** Hash of the rubric text, so scores from different rubrics are never mixed. */
    rubricHash: text('rubric_hash').notNull(),
    score: doublePrecision('score').notNull(),
    explanation: text('explanation'),
    /** The judge call's tokens and cost attributed to this trajectory. */
    promptTokens: integer('prompt_tokens'),
    completionTokens: integer('completion_tokens'),
    costUsd: doublePrecision('cost_usd'),
    /** Provenance (group hash, per-ordering scores, reward weights, …): protocol/judge-score-details.ts. Null on rows from before it. */
    details: jsonb('details').$type<JudgeScoreDetails>(),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table) => [index('judge_scores_trajectory_idx').on(table.trajectoryId)],
);

export type JudgeScore = typeof judgeScores.$inferSelect;
