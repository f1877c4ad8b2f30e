// Creating a rollout group: an empty group of `size` slots; trajectories join it one by one through
// startTrajectory, and the last one to finish marks it complete (see finish-trajectory.ts).
import { z } from 'zod';
import { metadataSchema } from '../schema/json.ts';
import { type RolloutGroup, rolloutGroups } from '../schema/rollout-groups.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

export const createGroupSchema = z.object({
  taskId: id,
  /** Trajectories in the group (GRPO's G); 1 is allowed, though it gives no group baseline. */
  size: z.number().int().min(1).max(1024),
  policyVersionId: id.optional(),
  experimentId: id.optional(),
  metadata: metadataSchema.optional(),
});
export type CreateGroupInput = z.input<typeof createGroupSchema>;

export async function createGroup(db: StoreDb, input: CreateGroupInput): Promise<RolloutGroup> {
  const group = parseInput(createGroupSchema, input, 'createGroup');
  const [row] = await db
    .insert(rolloutGroups)
    .values({
      taskId: group.taskId,
      size: group.size,
      policyVersionId: group.policyVersionId ?? null,
      experimentId: group.experimentId ?? null,
      metadata: group.metadata ?? {},
    })
    .returning();
  if (!row) throw new Error('insert returned no row');
  return row;
}
