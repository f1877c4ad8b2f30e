// The policy lease: at most one trainer advances a policy at a time. One row per policy, naming the
// trainer (its lease owner) and when the lease lapses; a crashed trainer's lease is taken over after
// it expires. Leaves out the group leases (rollout-groups.ts), which a cycle holds besides this one.
import { pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { timestamptz } from './columns.ts';
import { policies } from './policies.ts';

export const policyLeases = pgTable('policy_leases', {
  policyId: uuid('policy_id')
    .primaryKey()
    .references(() => policies.id),
  owner: text('owner').notNull(),
  expiresAt: timestamptz('expires_at').notNull(),
  /** When `owner` took it (renewals keep it). */
  takenAt: timestamptz('taken_at').notNull().defaultNow(),
});

export type PolicyLease = typeof policyLeases.$inferSelect;
