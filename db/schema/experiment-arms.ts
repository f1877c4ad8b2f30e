// The arms of an experiment: a policy version and the share of traffic it gets.
import { sql } from 'drizzle-orm';
import { check, doublePrecision, integer, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from './columns.ts';
import { experiments } from './experiments.ts';
import { policyVersions } from './policies.ts';

export const experimentArms = pgTable(
  'experiment_arms',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    experimentId: uuid('experiment_id')
      .notNull()
      .references(() => experiments.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    policyVersionId: uuid('policy_version_id')
      .notNull()
      .references(() => policyVersions.id),
    /** Relative traffic weight: an arm gets weight / (sum of the experiment's weights) of requests. */
    weight: doublePrecision('weight').notNull().default(1),
    /** The arm's place in the order it was created in; the A/B report compares every arm with position 0. */
    position: integer('position').notNull().default(0),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table) => [
    unique('experiment_arms_experiment_name_unique').on(table.experimentId, table.name),
    check('experiment_arms_weight_check', sql`${table.weight} >= 0`),
  ],
);

export type ExperimentArm = typeof experimentArms.$inferSelect;
