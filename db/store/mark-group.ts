// Explicit group endings: `complete` for a group that ends short of its size (the edge gave up on a
// slot; every started trajectory must have ended), and `failed` with a reason.
import { and, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { type RolloutGroup, rolloutGroups } from '../schema/rollout-groups.ts';
import { trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { assertGroupMove } from './group-transitions.ts';
import { lockGroup } from './lock-group.ts';
import { parseInput } from './parse-input.ts';

export async function markGroupComplete(db: StoreDb, groupId: string): Promise<RolloutGroup> {
  const key = parseInput(id, groupId, 'groupId');
  return db.transaction(async (tx) => {
    const group = await lockGroup(tx, key);
    assertGroupMove(key, group.status, 'complete');
    const [running] = await tx
      .select({ id: trajectories.id })
      .from(trajectories)
      .where(and(eq(trajectories.groupId, key), eq(trajectories.status, 'running')))
      .limit(1);
    if (running)
      throw new StoreError('conflict', `group ${key} still has a running trajectory (${running.id})`);
    const [updated] = await tx
      .update(rolloutGroups)
      .set({ status: 'complete', completedAt: sql`now()` })
      .where(eq(rolloutGroups.id, key))
      .returning();
    if (!updated) throw new Error('update returned no row');
    return updated;
  });
}

const markGroupFailedSchema = z.object({ groupId: id, reason: z.string().min(1).max(2000) });
export type MarkGroupFailedInput = z.input<typeof markGroupFailedSchema>;

export async function markGroupFailed(db: StoreDb, input: MarkGroupFailedInput): Promise<RolloutGroup> {
  const failure = parseInput(markGroupFailedSchema, input, 'markGroupFailed');
  return db.transaction(async (tx) => {
    const group = await lockGroup(tx, failure.groupId);
    assertGroupMove(group.id, group.status, 'failed');
    const [updated] = await tx
      .update(rolloutGroups)
      .set({ status: 'failed', statusReason: failure.reason, leaseOwner: null, leaseExpiresAt: null })
      .where(eq(rolloutGroups.id, group.id))
      .returning();
    if (!updated) throw new Error('update returned no row');
    return updated;
  });
}
