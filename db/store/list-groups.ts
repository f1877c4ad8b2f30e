// Listing groups, newest first, filtered by status, task, version or experiment.
import { groupStatuses } from '../../protocol/statuses.ts';
import { and, desc, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import { type RolloutGroup, rolloutGroups } from '../schema/rollout-groups.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

const listGroupsSchema = z.object({
  status: z.array(z.enum(groupStatuses)).min(1).optional(),
  taskId: id.optional(),
  policyVersionId: id.optional(),
  experimentId: id.optional(),
  limit: z.number().int().min(1).max(1000).default(100),
  offset: z.number().int().min(0).default(0),
});
export type ListGroupsInput = z.input<typeof listGroupsSchema>;

export async function listGroups(db: StoreDb, input: ListGroupsInput = {}): Promise<RolloutGroup[]> {
  const query = parseInput(listGroupsSchema, input, 'listGroups');
  return db
    .select()
    .from(rolloutGroups)
    .where(
      and(
        query.status ? inArray(rolloutGroups.status, query.status) : undefined,
        query.taskId ? eq(rolloutGroups.taskId, query.taskId) : undefined,
        query.policyVersionId ? eq(rolloutGroups.policyVersionId, query.policyVersionId) : undefined,
        query.experimentId ? eq(rolloutGroups.experimentId, query.experimentId) : undefined,
      ),
    )
    .orderBy(desc(rolloutGroups.createdAt), desc(rolloutGroups.id))
    .limit(query.limit)
    .offset(query.offset);
}
