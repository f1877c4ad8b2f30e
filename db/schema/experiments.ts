// A/B experiments on live traffic: which versions of a policy compete, the metric that decides, and
// how many rewarded trajectories each arm needs before the report gives a verdict. Arms are in
// experiment-arms.ts.
import { experimentStatuses } from '../../protocol/statuses.ts';
import { sql } from 'drizzle-orm';
import { check, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { experimentMetrics } from '../store-constants.ts';
import { checkOneOf, timestamptz } from './columns.ts';
import { policies } from './policies.ts';

export const experiments = pgTable(
  'experiments',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull().unique(),
    policyId: uuid('policy_id')
      .notNull()
      .references(() => policies.id),
    description: text('description'),
    status: text('status', { enum: experimentStatuses }).notNull().default('running'),
    metric: text('metric', { enum: experimentMetrics }).notNull().default('reward'),
    /** Rewarded trajectories every arm needs before the A/B report gives a verdict. */
    minSamples: integer('min_samples').notNull().default(100),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    stoppedAt: timestamptz('stopped_at'),
  },
  (table) => [
    checkOneOf('experiments_status_check', table.status, experimentStatuses),
    checkOneOf('experiments_metric_check', table.metric, experimentMetrics),
    check('experiments_min_samples_check', sql`${table.minSamples} >= 2`),
  ],
);

export type Experiment = typeof experiments.$inferSelect;
