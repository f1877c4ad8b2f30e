// Rollout groups: N episodes of one task under one policy version (or experiment), scored relative to
// each other (GRPO's group baseline, RULER's group ranking). A trainer holds a group through a lease.
import { groupStatuses } from '../../protocol/statuses.ts';
import { sql } from 'drizzle-orm';
import { check, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { checkOneOf, timestamptz } from './columns.ts';
import { experiments } from './experiments.ts';
import type { Metadata } from './json.ts';
import { policyVersions, trainingRuns } from './policies.ts';
import { tasks } from './tasks.ts';

export const rolloutGroups = pgTable(
  'rollout_groups',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    taskId: uuid('task_id')
      .notNull()
      .references(() => tasks.id),
    /** How many trajectories the group holds when complete. */
    size: integer('size').notNull(),
    policyVersionId: uuid('policy_version_id').references(() => policyVersions.id),
    experimentId: uuid('experiment_id').references(() => experiments.id),
    status: text('status', { enum: groupStatuses }).notNull().default('running'),
    /**
     * Trajectories of the group that ended, counted by finishTrajectory in the statement that ends
     * one; the finish that brings it to `size` completes the group. Groups from before this column
     * start at 0 and are completed by the sweep instead (sweep-trajectories.ts).
     */
    endedCount: integer('ended_count').notNull().default(0),
    /** Why the group is `unscored` or `failed` (the judge's last error, …). */
    statusReason: text('status_reason'),
    /** The trainer holding the group, until `lease_expires_at`; after that anyone may claim it. */
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: timestamptz('lease_expires_at'),
    /** The training run that trained on the group. */
    trainingRunId: uuid('training_run_id').references(() => trainingRuns.id),
    metadata: jsonb('metadata').$type<Metadata>().notNull().default({}),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    completedAt: timestamptz('completed_at'),
    scoredAt: timestamptz('scored_at'),
    trainedAt: timestamptz('trained_at'),
    /** Judgings that failed (the judge's own per-call retries count as one); protocol/score-retry.ts. */
    scoreAttempts: integer('score_attempts').notNull().default(0),
    /** The last failed judging's reason, kept after a later success. */
    lastScoreError: text('last_score_error'),
    /** An `unscored` group is not claimed for judging again before this time. */
    nextScoreAt: timestamptz('next_score_at'),
    /**
     * The key an uploader gave a group of recorded episodes (ingestTrajectories, each episode naming
     * it): episodes under the same key join the same group, in one upload or several. Null: not ingested.
     */
    ingestKey: text('ingest_key'),
  },
  (table) => [
    index('rollout_groups_status_created_idx').on(table.status, table.createdAt),
    index('rollout_groups_task_idx').on(table.taskId),
    uniqueIndex('rollout_groups_ingest_key_idx').on(table.ingestKey),
    checkOneOf('rollout_groups_status_check', table.status, groupStatuses),
    check('rollout_groups_size_check', sql`${table.size} > 0`),
  ],
);

export type RolloutGroup = typeof rolloutGroups.$inferSelect;
