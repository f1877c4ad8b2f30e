// Finishing a trajectory with its outcome. When it is the last of its group to end, the group becomes
// `complete` in the same transaction (the group row is locked, so two last finishers cannot both miss
// it). A retried identical finish is a no-op; a different one is `trajectory-closed`.
import { endStatuses, refineEndReason } from '../../protocol/finish.ts';
import { storableMessage } from '../../protocol/stored-text.ts';
import { and, count, eq, ne, sql } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { metadataSchema } from '../schema/json.ts';
import { rolloutGroups } from '../schema/rollout-groups.ts';
import { type Trajectory, trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { id, leaseOwner } from './fields.ts';
import { parseInput } from './parse-input.ts';
import { fromTrajectoryRow } from './trajectory-row.ts';

export const finishTrajectorySchema = z
  .object({
    trajectoryId: id,
    status: z.enum(endStatuses),
    verifierReward: z.number().optional(),
    /** Required for `error`; allowed for `truncated` (why it was cut: `max-turns`, …). */
    errorReason: z.string().min(1).max(2000).optional(),
    /** Merged into the trajectory's metadata. */
    metadata: metadataSchema.optional(),
    /** A rollout runner's name: the finish is refused (`lease-lost`) when another runner took the episode over. */
    runner: leaseOwner.optional(),
  })
  .superRefine(refineEndReason('errorReason'));
export type FinishTrajectoryInput = z.input<typeof finishTrajectorySchema>;

export interface FinishTrajectoryResult {
  readonly trajectory: Trajectory;
  /** True when this call completed the trajectory's group. */
  readonly groupCompleted: boolean;
}

export async function finishTrajectory(
  db: StoreDb,
  input: FinishTrajectoryInput,
): Promise<FinishTrajectoryResult> {
  const parsed = parseInput(finishTrajectorySchema, input, 'finishTrajectory', { keepText: ['errorReason'] });
  // The reason is a message (a verifier's error may quote the model's answer): shown, not refused.
  const finish =
    parsed.errorReason === undefined
      ? parsed
      : { ...parsed, errorReason: storableMessage(parsed.errorReason) };
  return db.transaction(async (tx) => {
    const [trajectory] = await tx
      .update(trajectories)
      .set({
        status: finish.status,
        verifierReward: finish.verifierReward ?? null,
        errorReason: finish.errorReason ?? null,
        finishedAt: sql`now()`,
        // An ended episode holds no lease; `runner` stays, to say who ran it last.
        leaseExpiresAt: null,
        metadata: sql`${trajectories.metadata} || ${JSON.stringify(finish.metadata ?? {})}::jsonb`,
      })
      .where(
        and(
          eq(trajectories.id, finish.trajectoryId),
          eq(trajectories.status, 'running'),
          finish.runner !== undefined ? eq(trajectories.runner, finish.runner) : undefined,
        ),
      )
      .returning();
    if (!trajectory) {
      const [stored] = await tx.select().from(trajectories).where(eq(trajectories.id, finish.trajectoryId));
      if (!stored) throw new StoreError('not-found', `trajectory ${finish.trajectoryId} does not exist`);
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
      throw new StoreError(
        'trajectory-closed',
        `trajectory ${finish.trajectoryId} is already ${stored.status}`,
      );
    }
    return { trajectory: fromTrajectoryRow(trajectory), groupCompleted: await completeGroup(tx, trajectory) };
  });
}

/** Whether finishing `trajectory` completed its group (then marked `complete`, in the caller's transaction). */
async function completeGroup(tx: StoreDb, trajectory: Trajectory): Promise<boolean> {
  if (!trajectory.groupId) return false;
  const [group] = await tx
    .select({ size: rolloutGroups.size, status: rolloutGroups.status })
    .from(rolloutGroups)
    .where(eq(rolloutGroups.id, trajectory.groupId))
    .for('update');
  if (group?.status !== 'running') return false;
  const [ended] = await tx
    .select({ total: count() })
    .from(trajectories)
    .where(and(eq(trajectories.groupId, trajectory.groupId), ne(trajectories.status, 'running')));
  if ((ended?.total ?? 0) < group.size) return false;
  await tx
    .update(rolloutGroups)
    .set({ status: 'complete', completedAt: sql`now()` })
    .where(eq(rolloutGroups.id, trajectory.groupId));
  return true;
}
