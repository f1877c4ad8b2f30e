// Setting the rewards the trainer used (verifier and judge combined), all or none.
import { eq } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

const setFinalRewardsSchema = z.object({
  rewards: z
    .array(z.object({ trajectoryId: id, finalReward: z.number() }))
    .min(1)
    .max(10_000),
});
export type SetFinalRewardsInput = z.input<typeof setFinalRewardsSchema>;

export async function setFinalRewards(db: StoreDb, input: SetFinalRewardsInput): Promise<number> {
  const { rewards } = parseInput(setFinalRewardsSchema, input, 'setFinalRewards');
  return db.transaction(async (tx) => {
    for (const [index, reward] of rewards.entries()) {
      const updated = await tx
        .update(trajectories)
        .set({ finalReward: reward.finalReward })
        .where(eq(trajectories.id, reward.trajectoryId))
        .returning({ id: trajectories.id });
      if (updated.length === 0) {
        throw new StoreError(
          'not-found',
          `rewards.${index}.trajectoryId: trajectory ${reward.trajectoryId} does not exist`,
        );
      }
    }
    return rewards.length;
  });
}
