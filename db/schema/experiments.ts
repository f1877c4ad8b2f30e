// A/B experiments on live traffic: which versions of a policy compete. Arms are in experiment-arms.ts.
import { experimentStatuses } from '../../protocol/statuses.ts';
import { pgTable, text, uuid } from 'drizzle-orm/pg-core';
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
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    stoppedAt: timestamptz('stopped_at'),
  },
  (table) => [checkOneOf('experiments_status_check', table.status, experimentStatuses)],
);

export type Experiment = typeof experiments.$inferSelect;
