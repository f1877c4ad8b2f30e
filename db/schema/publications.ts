// Where each policy version's adapter is served: one row per (version, inference replica), the state
// of its fleet publication there (protocol/statuses.ts, publicationStates), the attempts and the last
// failure. The edge routes a version's requests only to the replicas whose row is `ready`; the trainer
// writes the rows as it publishes (prepare → verify → commit) and as it catches restarted replicas up.
// A replica is named by its OpenAI base URL (protocol/replica-url.ts).
import { publicationStates } from '../../protocol/statuses.ts';
import { index, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { checkOneOf, timestamptz } from './columns.ts';
import { policyVersions } from './policies.ts';

export const publications = pgTable(
  'publications',
  {
    policyVersionId: uuid('policy_version_id')
      .notNull()
      .references(() => policyVersions.id),
    /** The replica's OpenAI base URL, e.g. `http://10.0.0.7:8000/v1`. */
    replica: text('replica').notNull(),
    state: text('state', { enum: publicationStates }).notNull(),
    /** Attempts here: each publication's prepare phase and each catch-up load count one. */
    attempts: integer('attempts').notNull().default(0),
    /** The last failure here (which phase and why); kept after a later success, so recoveries show. */
    lastError: text('last_error'),
    /** When the row last became `ready`. */
    readyAt: timestamptz('ready_at'),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    updatedAt: timestamptz('updated_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ name: 'publications_pkey', columns: [table.policyVersionId, table.replica] }),
    index('publications_replica_idx').on(table.replica),
    checkOneOf('publications_state_check', table.state, publicationStates),
  ],
);

export type Publication = typeof publications.$inferSelect;
