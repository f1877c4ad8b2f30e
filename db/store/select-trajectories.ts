// Choosing finished episodes by reward, e.g. the good ones for supervised warm-up (`edgerl train
// --sft`): ended `finished` (or also `truncated`), reward at least a threshold, optionally one
// environment or one policy's versions, newest first. Returns rows without turns (getTrajectory reads those).
import { and, desc, eq, gte, inArray, isNotNull } from 'drizzle-orm';
import { z } from 'zod';
import { policyVersions } from '../schema/policies.ts';
import { type Trajectory, trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { id, name } from './fields.ts';
import { parseInput } from './parse-input.ts';
import { fromTrajectoryRow } from './trajectory-row.ts';

export const trajectoryRewardFields = ['final', 'verifier'] as const;
export type TrajectoryRewardField = (typeof trajectoryRewardFields)[number];

const selectTrajectoriesSchema = z.object({
  /** Which reward to compare: the trainer's combined `final_reward` or the environment's `verifier_reward`. */
  reward: z.enum(trajectoryRewardFields).default('final'),
  minReward: z.number().finite(),
  env: name.optional(),
  policyId: id.optional(),
  includeTruncated: z.boolean().default(false),
  limit: z.number().int().min(1).max(100_000).default(1000),
});
export type SelectTrajectoriesInput = z.input<typeof selectTrajectoriesSchema>;

export async function selectTrajectories(db: StoreDb, input: SelectTrajectoriesInput): Promise<Trajectory[]> {
  const query = parseInput(selectTrajectoriesSchema, input, 'selectTrajectories');
  const column = query.reward === 'final' ? trajectories.finalReward : trajectories.verifierReward;
  const rows = await db
    .select()
    .from(trajectories)
    .where(
      and(
        inArray(trajectories.status, query.includeTruncated ? ['finished', 'truncated'] : ['finished']),
        isNotNull(column),
        gte(column, query.minReward),
        query.env ? eq(trajectories.env, query.env) : undefined,
        query.policyId
          ? inArray(
              trajectories.policyVersionId,
              db
                .select({ id: policyVersions.id })
                .from(policyVersions)
                .where(eq(policyVersions.policyId, query.policyId)),
            )
          : undefined,
      ),
    )
    .orderBy(desc(trajectories.startedAt), desc(trajectories.id))
    .limit(query.limit);
  return rows.map(fromTrajectoryRow);
}
