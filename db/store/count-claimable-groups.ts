// How many groups a trainer could claim right now (the same conditions as claimGroups, no lease
// taken): what `edgerl train --continuous` polls before it starts a cycle, so a step waits for a full
// batch instead of training on the first group to complete.
import { count } from 'drizzle-orm';
import { z } from 'zod';
import { rolloutGroups } from '../schema/rollout-groups.ts';
import { taskSplits } from '../../protocol/statuses.ts';
import type { StoreDb } from '../store-db.ts';
import { claimableWhere } from './claim-groups.ts';
import { id } from './fields.ts';
import { claimableStatuses } from './group-transitions.ts';
import { parseInput } from './parse-input.ts';

const countClaimableGroupsSchema = z.object({
  /** Only groups served by versions of this policy. */
  policyId: id.optional(),
  /** Also count `unscored` groups whose `next_score_at` has passed (a judged trainer retries them). */
  retryUnscored: z.boolean().default(false),
  /** Only groups whose task is in one of these splits (as claimGroups' `splits`). */
  splits: z.array(z.enum(taskSplits)).min(1).optional(),
});
export type CountClaimableGroupsInput = z.input<typeof countClaimableGroupsSchema>;

export async function countClaimableGroups(
  db: StoreDb,
  input: CountClaimableGroupsInput = {},
): Promise<number> {
  const query = parseInput(countClaimableGroupsSchema, input, 'countClaimableGroups');
  const [row] = await db
    .select({ groups: count() })
    .from(rolloutGroups)
    .where(claimableWhere(db, { ...query, statuses: [...claimableStatuses], excludeIds: [] }));
  return row?.groups ?? 0;
}
