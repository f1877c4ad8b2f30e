// The history of a policy's default version: every A/B promote, and every rollback that undid one.
// Rollback walks it backwards (the newest promote not yet undone), so promote, promote, rollback,
// rollback returns to where it started. Defaults set by other means (publish --default) are not here.
import { sql } from 'drizzle-orm';
import { type AnyPgColumn, check, index, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { checkOneOf, timestamptz } from './columns.ts';
import { experiments } from './experiments.ts';
import { policies, policyVersions } from './policies.ts';

export const defaultChangeActions = ['promote', 'rollback'] as const;
export type DefaultChangeAction = (typeof defaultChangeActions)[number];

export const policyDefaultChanges = pgTable(
  'policy_default_changes',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    policyId: uuid('policy_id')
      .notNull()
      .references(() => policies.id),
    action: text('action', { enum: defaultChangeActions }).notNull(),
    /** The default before the change; null when the policy had none. */
    fromVersionId: uuid('from_version_id').references(() => policyVersions.id),
    toVersionId: uuid('to_version_id')
      .notNull()
      .references(() => policyVersions.id),
    /** The experiment whose arm was promoted. */
    experimentId: uuid('experiment_id').references(() => experiments.id),
    /** For a rollback: the promote it undid (unique, so a promote is undone at most once). */
    revertsChangeId: uuid('reverts_change_id').references((): AnyPgColumn => policyDefaultChanges.id),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table) => [
    index('policy_default_changes_policy_idx').on(table.policyId, table.createdAt),
    unique('policy_default_changes_reverts_unique').on(table.revertsChangeId),
    checkOneOf('policy_default_changes_action_check', table.action, defaultChangeActions),
    // A rollback names the promote it undid; a promote names none.
    check(
      'policy_default_changes_reverts_check',
      sql`(${table.action} = 'rollback') = (${table.revertsChangeId} is not null)`,
    ),
  ],
);

export type PolicyDefaultChange = typeof policyDefaultChanges.$inferSelect;
