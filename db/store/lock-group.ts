// Reads a group row FOR UPDATE inside a transaction, or throws `not-found`. Functions that move a
// group's status lock it first, so status changes on one group happen one at a time.
import { eq } from 'drizzle-orm';
import { StoreError } from '../errors.ts';
import { type RolloutGroup, rolloutGroups } from '../schema/rollout-groups.ts';
import type { StoreDb } from '../store-db.ts';

export async function lockGroup(tx: StoreDb, groupId: string): Promise<RolloutGroup> {
  const [group] = await tx.select().from(rolloutGroups).where(eq(rolloutGroups.id, groupId)).for('update');
  if (!group) throw new StoreError('not-found', `group ${groupId} does not exist`);
  return group;
}
