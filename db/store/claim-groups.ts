// Claiming groups for training under a lease. The candidate rows are locked FOR UPDATE SKIP LOCKED
// before the lease is written, in one transaction, so two trainers claiming at once skip each other's
// rows and never share a group; a lease that expired (its trainer crashed) makes the group claimable
// again. Under READ COMMITTED a row locked after another claimer committed is re-checked against the
// WHERE clause (Postgres manual §13.2.1), so a fresh lease is never taken over.
import { and, asc, eq, inArray, isNull, lt, lte, notInArray, or, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import { taskSplits } from '../../protocol/statuses.ts';
import { policyVersions } from '../schema/policies.ts';
import { type RolloutGroup, rolloutGroups } from '../schema/rollout-groups.ts';
import { tasks } from '../schema/tasks.ts';
import type { StoreDb } from '../store-db.ts';
import { defaultLeaseSeconds } from '../store-constants.ts';
import { id, leaseOwner, leaseSeconds } from './fields.ts';
import { claimableStatuses } from './group-transitions.ts';
import { parseInput } from './parse-input.ts';

export const claimGroupsSchema = z.object({
  owner: leaseOwner,
  limit: z.number().int().min(1).max(1000).default(1),
  leaseSeconds: leaseSeconds.default(defaultLeaseSeconds),
  /** Which of the claimable statuses to take (default both: score the complete ones, train the scored). */
  statuses: z
    .array(z.enum(claimableStatuses))
    .min(1)
    .default([...claimableStatuses]),
  /** Only groups served by versions of this policy. */
  policyId: id.optional(),
  /** Also take `unscored` groups whose `next_score_at` has passed, to judge them again (the trainer's RULER modes). */
  retryUnscored: z.boolean().default(false),
  /** Groups not to take (a trainer's groups the judge already failed in this cycle). */
  excludeIds: z.array(id).max(10_000).default([]),
  /**
   * Only groups whose task is in one of these splits (the trainer: `train`, so validation and eval
   * episodes, which choose and judge versions, never become training data). Absent: any split.
   */
  splits: z.array(z.enum(taskSplits)).min(1).optional(),
});
export type ClaimGroupsInput = z.input<typeof claimGroupsSchema>;

/** Which groups a claim with these settings may take now (free of a live lease). */
export function claimableWhere(
  db: StoreDb,
  claim: Pick<
    z.output<typeof claimGroupsSchema>,
    'statuses' | 'retryUnscored' | 'excludeIds' | 'splits' | 'policyId'
  >,
): SQL | undefined {
  return and(
    or(
      inArray(rolloutGroups.status, claim.statuses),
      claim.retryUnscored
        ? and(
            eq(rolloutGroups.status, 'unscored'),
            or(isNull(rolloutGroups.nextScoreAt), lte(rolloutGroups.nextScoreAt, sql`now()`)),
          )
        : undefined,
    ),
    or(isNull(rolloutGroups.leaseExpiresAt), lt(rolloutGroups.leaseExpiresAt, sql`now()`)),
    claim.excludeIds.length > 0 ? notInArray(rolloutGroups.id, claim.excludeIds) : undefined,
    claim.splits
      ? inArray(
          rolloutGroups.taskId,
          db.select({ id: tasks.id }).from(tasks).where(inArray(tasks.split, claim.splits)),
        )
      : undefined,
    claim.policyId
      ? inArray(
          rolloutGroups.policyVersionId,
          db
            .select({ id: policyVersions.id })
            .from(policyVersions)
            .where(eq(policyVersions.policyId, claim.policyId)),
        )
      : undefined,
  );
}

/** Leases up to `limit` groups, oldest first; returns them in that order (empty when none is free). */
export async function claimGroups(db: StoreDb, input: ClaimGroupsInput): Promise<RolloutGroup[]> {
  const claim = parseInput(claimGroupsSchema, input, 'claimGroups');
  return db.transaction(async (tx) => {
    const candidates = await tx
      .select({ id: rolloutGroups.id })
      .from(rolloutGroups)
      .where(claimableWhere(tx, claim))
      .orderBy(asc(rolloutGroups.createdAt), asc(rolloutGroups.id))
      .limit(claim.limit)
      .for('update', { of: rolloutGroups, skipLocked: true });
    if (candidates.length === 0) return [];
    const ids = candidates.map((candidate) => candidate.id);
    const claimed = await tx
      .update(rolloutGroups)
      .set({
        leaseOwner: claim.owner,
        leaseExpiresAt: sql`now() + ${claim.leaseSeconds}::double precision * interval '1 second'`,
      })
      .where(inArray(rolloutGroups.id, ids))
      .returning();
    // UPDATE … RETURNING has no defined order; give the rows back in the order they were picked.
    return claimed.sort((a, b) => ids.indexOf(a.id) - ids.indexOf(b.id));
  });
}
