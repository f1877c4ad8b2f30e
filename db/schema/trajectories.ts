// Trajectories: one agent episode each, with its outcome and rewards. Its messages are in turns.ts.
import type { ToolSpec } from '../../protocol/chat.ts';
import { trajectoryStatuses } from '../../protocol/statuses.ts';
import { textEncodings } from '../../protocol/stored-text.ts';
import { trajectoryWriters } from '../../protocol/trajectory-writer.ts';
import { sql } from 'drizzle-orm';
import {
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core';
import { checkOneOf, timestamptz } from './columns.ts';
import { experimentArms } from './experiment-arms.ts';
import type { Metadata } from './json.ts';
import { policyVersions } from './policies.ts';
import { rolloutGroups } from './rollout-groups.ts';
import { tasks } from './tasks.ts';

export const trajectories = pgTable(
  'trajectories',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** Null for episodes outside training groups (live traffic). */
    groupId: uuid('group_id').references(() => rolloutGroups.id),
    env: text('env').notNull(),
    taskId: uuid('task_id').references(() => tasks.id),
    /** The policy version that served the episode. */
    policyVersionId: uuid('policy_version_id').references(() => policyVersions.id),
    experimentArmId: uuid('experiment_arm_id').references(() => experimentArms.id),
    /** What A/B routing hashed to pick the arm (a user or session id), so one user sees one arm. */
    stickinessKey: text('stickiness_key'),
    status: text('status', { enum: trajectoryStatuses }).notNull().default('running'),
    /** The environment's own check (exact answer, tests passing), when it has one. */
    verifierReward: doublePrecision('verifier_reward'),
    /** The LLM judge's score (RULER), from judge_scores. */
    judgeScore: doublePrecision('judge_score'),
    /** The reward the trainer used, combining the two. */
    finalReward: doublePrecision('final_reward'),
    turnCount: integer('turn_count').notNull().default(0),
    /** Sum over assistant turns of their prompt tokens (what an inference bill counts). */
    promptTokenCount: integer('prompt_token_count').notNull().default(0),
    /** Sum over assistant turns of their sampled completion tokens. */
    completionTokenCount: integer('completion_token_count').notNull().default(0),
    /** Sum of the turns' latencies, in milliseconds. */
    latencyMs: doublePrecision('latency_ms').notNull().default(0),
    errorReason: text('error_reason'),
    /**
     * The tools the episode was offered (the environment's when its rollout started; the proxy's last
     * request's `tools`), which the trainer and the judge render. Null: not recorded (rows written
     * before this column, or turns written without the proxy).
     */
    tools: jsonb('tools').$type<ToolSpec[]>(),
    /** `escaped` when `tools` is in protocol/stored-text.ts's escaped form (a spec held a NUL or a lone surrogate). */
    textEncoding: text('text_encoding', { enum: textEncodings }).notNull().default('plain'),
    metadata: jsonb('metadata').$type<Metadata>().notNull().default({}),
    startedAt: timestamptz('started_at').notNull().defaultNow(),
    finishedAt: timestamptz('finished_at'),
    /**
     * The edge (or queue consumer) running a rollout episode: it holds the episode until
     * `lease_expires_at`, renewed by each turn it stores and by a beat while a call is slow. After
     * expiry another runner may take it over (db/store/trajectory-leases.ts). Null: never claimed.
     */
    runner: text('runner'),
    /** The runner's last sign of life (a stored turn or a beat), by the database clock. */
    heartbeatAt: timestamptz('heartbeat_at'),
    /** Until when `runner` holds the episode; null when nobody does (never claimed, released, ended). */
    leaseExpiresAt: timestamptz('lease_expires_at'),
    /** Times a sweep or a restarted edge took the episode over from a runner that stopped. */
    resumes: integer('resumes').notNull().default(0),
    /**
     * The key an uploader gave a recorded episode (POST /v1/trajectories with turns, `edgerl import`):
     * a retried upload with the same key is a no-op, another episode under it a conflict. Null: not ingested.
     */
    ingestKey: text('ingest_key'),
    /**
     * Who may write it (protocol/trajectory-writer.ts; docs/edge.md, "Who writes a trajectory"): its
     * rollout runner, the client holding its trajectory key, or nobody (ingested whole). Checked by
     * the store's append and finish statements.
     */
    writer: text('writer', { enum: trajectoryWriters }).notNull().default('client'),
    /**
     * Hex SHA-256 of a `client` trajectory's key (`<id>.<secret>`), given to its creator once. Null: no
     * key (not a client trajectory, or one opened before keys existed, which its id alone still writes).
     */
    keyDigest: text('key_digest'),
  },
  (table) => [
    index('trajectories_group_idx').on(table.groupId),
    index('trajectories_arm_idx').on(table.experimentArmId),
    index('trajectories_started_idx').on(table.startedAt),
    // Nulls are distinct in a unique index, so only ingested rows take part.
    uniqueIndex('trajectories_ingest_key_idx').on(table.ingestKey),
    // The sweep's scan: only running rows, the few there are at any time.
    index('trajectories_running_lease_idx').on(table.leaseExpiresAt).where(sql`${table.status} = 'running'`),
    checkOneOf('trajectories_status_check', table.status, trajectoryStatuses),
    checkOneOf('trajectories_text_encoding_check', table.textEncoding, textEncodings),
    checkOneOf('trajectories_writer_check', table.writer, trajectoryWriters),
  ],
);

/** A row as stored, with its trajectory key's digest. */
export type TrajectoryRow = typeof trajectories.$inferSelect;
/** A row as the store hands it out: the key digest never leaves the store's own checks. */
export type Trajectory = Omit<TrajectoryRow, 'keyDigest'>;
