// Past successes for the trainer to replay beside each GRPO step (trainer/train/replay.ts): the best
// finished trajectory of each group of a policy that a trainer already consumed (`trained`), on
// training tasks, with final_reward at least a threshold; `limit` of them in an order fixed by `salt`,
// so a step's choice is repeatable and successive steps see different tasks. Rows without turns.
import { and, desc, eq, gte, inArray, isNotNull, notInArray, sql } from 'drizzle-orm';
import { z } from 'zod';
import { policyVersions } from '../schema/policies.ts';
import { rolloutGroups } from '../schema/rollout-groups.ts';
import { tasks } from '../schema/tasks.ts';
import { type Trajectory, trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';
import { fromTrajectoryRow } from './trajectory-row.ts';

const replayTrajectoriesSchema = z.object({
  policyId: id,
  minReward: z.number().finite(),
  limit: z.number().int().min(1).max(10_000),
  /** Any text: the same salt over the same rows gives the same choice. */
  salt: z.string().max(200),
  /** Groups left out (the step's own, which its GRPO loss already trains on). */
  excludeGroupIds: z.array(id).max(10_000).default([]),
});
export type ReplayTrajectoriesInput = z.input<typeof replayTrajectoriesSchema>;

export async function replayTrajectories(db: StoreDb, input: ReplayTrajectoriesInput): Promise<Trajectory[]> {
  const query = parseInput(replayTrajectoriesSchema, input, 'replayTrajectories');
  // One per group: its highest reward, ties to the smallest id.
  const best = db
    .selectDistinctOn([trajectories.groupId], { id: trajectories.id })
    .from(trajectories)
    .innerJoin(rolloutGroups, eq(rolloutGroups.id, trajectories.groupId))
    .innerJoin(tasks, eq(tasks.id, rolloutGroups.taskId))
    .innerJoin(policyVersions, eq(policyVersions.id, rolloutGroups.policyVersionId))
    .where(
      and(
        eq(policyVersions.policyId, query.policyId),
        eq(rolloutGroups.status, 'trained'),
        eq(tasks.split, 'train'),
        eq(trajectories.status, 'finished'),
        isNotNull(trajectories.finalReward),
        gte(trajectories.finalReward, query.minReward),
        query.excludeGroupIds.length > 0 ? notInArray(rolloutGroups.id, query.excludeGroupIds) : undefined,
      ),
    )
    .orderBy(trajectories.groupId, desc(trajectories.finalReward), trajectories.id)
    .as('best');
  const rows = await db
    .select()
    .from(trajectories)
    .where(inArray(trajectories.id, db.select({ id: best.id }).from(best)))
    .orderBy(sql`md5(${trajectories.id}::text || ${query.salt})`)
    .limit(query.limit);
  return rows.map(fromTrajectoryRow);
}
