// Finishing a trajectory with its outcome, and completing its group when it is the last to end, in ONE
// statement (one round trip). The group counts its ended trajectories (`ended_count`): the statement's
// UPDATE of the group row adds one, and when two last finishers race, the second waits for the first's
// row lock and then recomputes its SET from the row's new version (READ COMMITTED's recheck, Postgres
// manual 13.2.1), so exactly one of them sees the count reach `size`. Counting rows instead would read
// the statement's snapshot, where neither finisher sees the other. A retried identical finish is a
// no-op; a different one is `trajectory-closed`; both are explained by a second query, only then.
// Only the trajectory's writer finishes it (trajectory-access.ts), checked in the same UPDATE.
import { endStatuses, refineEndReason } from '../../protocol/finish.ts';
import { storableMessage } from '../../protocol/stored-text.ts';
import { rewardSchema } from '../../protocol/validate-turns.ts';
import { eq, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { metadataSchema } from '../schema/json.ts';
import { rowsOf } from '../rows-of.ts';
import { rowOf } from './raw-row.ts';
import { type Trajectory, trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { id, leaseOwner } from './fields.ts';
import { parseInput } from './parse-input.ts';
import { accessCondition, accessRefusal, type TrajectoryAccess } from './trajectory-access.ts';
import { fromTrajectoryRow } from './trajectory-row.ts';

export const finishTrajectorySchema = z
  .object({
    trajectoryId: id,
    status: z.enum(endStatuses),
    /** In [0, 1], as every writer of a reward (protocol/validate-turns.ts). */
    verifierReward: rewardSchema.optional(),
    /** Required for `error`; allowed for `truncated` (why it was cut: `max-turns`, …). */
    errorReason: z.string().min(1).max(2000).optional(),
    /** Merged into the trajectory's metadata. */
    metadata: metadataSchema.optional(),
    /** A rollout runner's name: the finish is refused (`lease-lost`) when another runner took the episode over. */
    runner: leaseOwner.optional(),
    /**
     * Who finishes it (trajectory-access.ts): `runner` for a rollout slot (implied by `runner`; alone,
     * the edge ending a slot no runner could run), `client` (the default) for one opened for the proxy.
     */
    writer: z.enum(['runner', 'client']).optional(),
    /** A client's trajectory key digest (hex SHA-256), required when the trajectory has one. */
    keyDigest: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'must be a hex SHA-256 digest')
      .optional(),
  })
  .superRefine(refineEndReason('errorReason'));
export type FinishTrajectoryInput = z.input<typeof finishTrajectorySchema>;

/** The writer a parsed finish acts as (trajectory-access.ts). */
export function finishAccess(finish: z.output<typeof finishTrajectorySchema>): TrajectoryAccess {
  if (finish.runner !== undefined || finish.writer === 'runner') {
    return { writer: 'runner', ...(finish.runner !== undefined ? { runner: finish.runner } : {}) };
  }
  return { writer: 'client', ...(finish.keyDigest !== undefined ? { keyDigest: finish.keyDigest } : {}) };
}

export interface FinishTrajectoryResult {
  readonly trajectory: Trajectory;
  /** True when this call completed the trajectory's group. */
  readonly groupCompleted: boolean;
}

/** The checked input, its error reason made storable (a message, not data: shown, not refused). */
export function parseFinish(input: FinishTrajectoryInput): z.output<typeof finishTrajectorySchema> {
  const parsed = parseInput(finishTrajectorySchema, input, 'finishTrajectory', { keepText: ['errorReason'] });
  // The reason is a message (a verifier's error may quote the model's answer): shown, not refused.
  return parsed.errorReason === undefined
    ? parsed
    : { ...parsed, errorReason: storableMessage(parsed.errorReason) };
}

/** The assignments that end a trajectory row, for an UPDATE's SET (this file's, and a final step's). */
export function finishAssignments(finish: z.output<typeof finishTrajectorySchema>): SQL {
  return sql`status = ${finish.status}, verifier_reward = ${finish.verifierReward ?? null}::double precision,
        error_reason = ${finish.errorReason ?? null}::text, finished_at = now(),
        -- An ended episode holds no lease; runner stays, to say who ran it last.
        lease_expires_at = null,
        metadata = metadata || ${JSON.stringify(finish.metadata ?? {})}::jsonb`;
}

/**
 * The CTE `counted` that counts the trajectory the CTE named `source` ended (returning its group_id)
 * in its group, completing the group when it is the last (the recheck above); and the statement's
 * result column after the ended row: `group_completed`.
 */
export function groupCompletion(source: 'finished' | 'final_step') {
  const ended = sql.raw(source);
  return {
    cte: sql`counted as (
      update rollout_groups g set
        ended_count = g.ended_count + 1,
        status = case when g.status = 'running' and g.ended_count + 1 >= g.size then 'complete' else g.status end,
        completed_at = case when g.status = 'running' and g.ended_count + 1 >= g.size then now() else g.completed_at end
      from ${ended} where g.id = ${ended}.group_id
      returning g.status = 'complete' and g.completed_at = now() and g.ended_count = g.size as completed
    )`,
    column: sql`coalesce((select completed from counted), false) as group_completed`,
  };
}

/** A row of a statement ending a trajectory (`ended.*` and `group_completed`), as the result. */
export function finishedRow(row: Record<string, unknown>): FinishTrajectoryResult {
  return {
    trajectory: fromTrajectoryRow(rowOf(trajectories, row)),
    groupCompleted: row.group_completed === true,
  };
}

export async function finishTrajectory(
  db: StoreDb,
  input: FinishTrajectoryInput,
): Promise<FinishTrajectoryResult> {
  const finish = parseFinish(input);
  const access = finishAccess(finish);
  const completion = groupCompletion('finished');
  const statement = sql`
    with finished as (
      update trajectories set ${finishAssignments(finish)}
      where id = ${finish.trajectoryId}::uuid and status = 'running'${accessCondition(access)}
      returning *
    ), ${completion.cte}
    select finished.*, ${completion.column} from finished`;
  const [row] = rowsOf<Record<string, unknown>>(await db.execute(statement));
  if (row) return finishedRow(row);
  const [stored] = await db.select().from(trajectories).where(eq(trajectories.id, finish.trajectoryId));
  if (!stored) throw new StoreError('not-found', `trajectory ${finish.trajectoryId} does not exist`);
  // Another writer's trajectory is refused before anything else: not even a repeat is confirmed to it.
  const refused = accessRefusal(stored, access, finish.trajectoryId);
  if (refused) throw refused;
  const repeated =
    stored.status === finish.status &&
    stored.verifierReward === (finish.verifierReward ?? null) &&
    stored.errorReason === (finish.errorReason ?? null);
  if (repeated) return { trajectory: fromTrajectoryRow(stored), groupCompleted: false };
  if (stored.status === 'running') {
    throw new StoreError(
      'lease-lost',
      `${finish.runner} no longer runs trajectory ${finish.trajectoryId}: ${stored.runner ?? 'nobody'} holds it`,
    );
  }
  throw new StoreError('trajectory-closed', `trajectory ${finish.trajectoryId} is already ${stored.status}`);
}
