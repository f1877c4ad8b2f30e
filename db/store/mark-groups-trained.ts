// Marking claimed groups trained, all or none, by the trainer that holds their lease. The lease is
// cleared and the training run recorded; a group claimed meanwhile by another trainer is `lease-lost`.
import { and, eq, inArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { type RolloutGroup, rolloutGroups } from '../schema/rollout-groups.ts';
import type { StoreDb } from '../store-db.ts';
import { id, leaseOwner } from './fields.ts';
import { canMoveGroup } from './group-transitions.ts';
import { parseInput } from './parse-input.ts';

const markGroupsTrainedSchema = z.object({
  owner: leaseOwner,
  groupIds: z.array(id).min(1).max(1000),
  trainingRunId: id.optional(),
});
export type MarkGroupsTrainedInput = z.input<typeof markGroupsTrainedSchema>;

export async function markGroupsTrained(db: StoreDb, input: MarkGroupsTrainedInput): Promise<RolloutGroup[]> {
  const trained = parseInput(markGroupsTrainedSchema, input, 'markGroupsTrained');
  return db.transaction(async (tx) => {
    const groups = await tx
      .select()
      .from(rolloutGroups)
      .where(inArray(rolloutGroups.id, trained.groupIds))
      .orderBy(rolloutGroups.id)
      .for('update');
    const byId = new Map(groups.map((group) => [group.id, group]));
    for (const groupId of trained.groupIds) {
      const group = byId.get(groupId);
      if (!group) throw new StoreError('not-found', `group ${groupId} does not exist`);
      if (group.leaseOwner !== trained.owner) {
        throw new StoreError('lease-lost', `${trained.owner} does not hold group ${groupId}`);
      }
      if (!canMoveGroup(group.status, 'trained')) {
        throw new StoreError('conflict', `group ${groupId} is ${group.status}; it cannot become trained`);
      }
    }
    return tx
      .update(rolloutGroups)
      .set({
        status: 'trained',
        trainedAt: sql`now()`,
        leaseOwner: null,
        leaseExpiresAt: null,
        trainingRunId: trained.trainingRunId ?? null,
      })
      .where(and(inArray(rolloutGroups.id, trained.groupIds), eq(rolloutGroups.leaseOwner, trained.owner)))
      .returning();
  });
}
