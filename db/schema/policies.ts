// Policies, their versions, and the training runs that produce versions. The three tables share a file
// because they point at each other (a policy at its default version, a version at the run that trained
// it, a run at the version it started from) and the import rules forbid cycles between files.
import { policyVersionStatuses } from '../../protocol/statuses.ts';
import {
  type AnyPgColumn,
  foreignKey,
  index,
  integer,
  jsonb,
  type PgTableExtraConfigValue,
  pgTable,
  text,
  unique,
  uuid,
} from 'drizzle-orm/pg-core';
import { checkOneOf, timestamptz } from './columns.ts';
import type { Metadata } from './json.ts';

// finished: the trainer's normal end; failed: an error ended it; interrupted: a signal, or a crash noticed by
// the next trainer that took the policy's lease over.
export const trainingRunStatuses = ['running', 'finished', 'failed', 'interrupted'] as const;
export type TrainingRunStatus = (typeof trainingRunStatuses)[number];

/** A named agent policy on one base model (`agent` on `Qwen/Qwen2.5-0.5B-Instruct`). */
export const policies = pgTable(
  'policies',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    name: text('name').notNull().unique(),
    baseModel: text('base_model').notNull(),
    description: text('description'),
    /** The version that requests naming no version get; A/B promote and rollback move it. */
    defaultVersionId: uuid('default_version_id'),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table): PgTableExtraConfigValue[] => [
    // Composite key: the default version must belong to this policy, not merely exist.
    foreignKey({
      name: 'policies_default_version_fk',
      columns: [table.id, table.defaultVersionId],
      foreignColumns: [policyVersions.policyId, policyVersions.id],
    }),
  ],
);

/** One servable state of a policy: the base weights (no adapter) or a LoRA adapter on top of them. */
export const policyVersions = pgTable(
  'policy_versions',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    policyId: uuid('policy_id')
      .notNull()
      .references((): AnyPgColumn => policies.id),
    /** 0, 1, 2, … per policy. */
    version: integer('version').notNull(),
    /** The model name the inference server answers to, e.g. `agent@7` (vLLM `--lora-modules` name). */
    adapterName: text('adapter_name').notNull().unique(),
    /** Where the adapter files live (a path or URL); null for the base weights. */
    adapterUri: text('adapter_uri'),
    parentVersionId: uuid('parent_version_id').references((): AnyPgColumn => policyVersions.id),
    trainingRunId: uuid('training_run_id').references((): AnyPgColumn => trainingRuns.id),
    status: text('status', { enum: policyVersionStatuses }).notNull().default('training'),
    metadata: jsonb('metadata').$type<Metadata>().notNull().default({}),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
    publishedAt: timestamptz('published_at'),
    retiredAt: timestamptz('retired_at'),
  },
  (table) => [
    unique('policy_versions_policy_version_unique').on(table.policyId, table.version),
    unique('policy_versions_policy_id_id_unique').on(table.policyId, table.id),
    checkOneOf('policy_versions_status_check', table.status, policyVersionStatuses),
  ],
);

/** One run of the trainer on one policy; its steps are in `training_steps`. */
export const trainingRuns = pgTable(
  'training_runs',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    policyId: uuid('policy_id')
      .notNull()
      .references(() => policies.id),
    /** The version whose weights the run started from. */
    baseVersionId: uuid('base_version_id').references((): AnyPgColumn => policyVersions.id),
    status: text('status', { enum: trainingRunStatuses }).notNull().default('running'),
    /** The trainer's resolved configuration, for reproducing the run. */
    config: jsonb('config').$type<Metadata>().notNull().default({}),
    errorReason: text('error_reason'),
    startedAt: timestamptz('started_at').notNull().defaultNow(),
    finishedAt: timestamptz('finished_at'),
  },
  (table) => [
    index('training_runs_policy_idx').on(table.policyId),
    checkOneOf('training_runs_status_check', table.status, trainingRunStatuses),
  ],
);

export type Policy = typeof policies.$inferSelect;
export type PolicyVersion = typeof policyVersions.$inferSelect;
export type TrainingRun = typeof trainingRuns.$inferSelect;
