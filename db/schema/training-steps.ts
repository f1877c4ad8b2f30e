// Training steps: the metrics of each optimiser step of a run, the groups it trained on, and when the
// step ran (so its overlap with the rollouts of the same minutes is a query away).
import { integer, jsonb, pgTable, primaryKey, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from './columns.ts';
import type { Metrics } from './json.ts';
import { trainingRuns } from './policies.ts';

export const trainingSteps = pgTable(
  'training_steps',
  {
    trainingRunId: uuid('training_run_id')
      .notNull()
      .references(() => trainingRuns.id, { onDelete: 'cascade' }),
    step: integer('step').notNull(),
    metrics: jsonb('metrics').$type<Metrics>().notNull(),
    groupIds: uuid('group_ids').array().notNull().default([]),
    /**
     * When the step's gradient computation began and when the update was applied, by the trainer's
     * clock. The row itself is written later, once the checkpoint holding the step is published
     * (`created_at`). Null for steps recorded before these columns.
     */
    startedAt: timestamptz('started_at'),
    finishedAt: timestamptz('finished_at'),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table) => [primaryKey({ name: 'training_steps_pkey', columns: [table.trainingRunId, table.step] })],
);

export type TrainingStep = typeof trainingSteps.$inferSelect;
