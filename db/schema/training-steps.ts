// Training steps: the metrics of each optimiser step of a run, and the groups it trained on.
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
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table) => [primaryKey({ name: 'training_steps_pkey', columns: [table.trainingRunId, table.step] })],
);

export type TrainingStep = typeof trainingSteps.$inferSelect;
