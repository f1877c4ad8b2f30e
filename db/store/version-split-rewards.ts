// Each policy version's verifier reward on the tasks of one split, read from the
// `version_split_rewards` view (db/migrations/0017_validation_split.sql), the one home of that
// aggregation: what the trainer's checkpoint retention and the demo's choice of the version that ships
// rank by (validation), and what a user queries with `edgerl sql`.
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { taskSplits } from '../../protocol/statuses.ts';
import { rowsOf } from '../rows-of.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

const versionSplitRewardsSchema = z.object({
  policyId: id,
  split: z.enum(taskSplits).default('validation'),
  /** Only this environment's episodes (a policy may serve several). Absent: all of them pooled. */
  env: z.string().min(1).max(200).optional(),
});
export type VersionSplitRewardsInput = z.input<typeof versionSplitRewardsSchema>;

export interface VersionSplitReward {
  readonly policyVersionId: string;
  readonly version: number;
  readonly adapterName: string;
  /** Ended episodes on the split's tasks. */
  readonly episodes: number;
  /** Of those, the ones with a verifier reward (the rest ended in an infrastructure error or have none). */
  readonly rewarded: number;
  readonly errors: number;
  /** Mean verifier reward of the rewarded episodes; null when none has one. */
  readonly meanReward: number | null;
}

/** One row per version of the policy with ended episodes on the split, in version order. */
export async function versionSplitRewards(
  db: StoreDb,
  input: VersionSplitRewardsInput,
): Promise<VersionSplitReward[]> {
  const query = parseInput(versionSplitRewardsSchema, input, 'versionSplitRewards');
  const result = await db.execute(sql`
    select policy_version_id, version, adapter_name,
           sum(trajectory_count)::integer as episodes, sum(rewarded_count)::integer as rewarded,
           sum(error_count)::integer as errors,
           sum(verifier_reward_mean * rewarded_count) / nullif(sum(rewarded_count), 0) as mean_reward
      from version_split_rewards
     where policy_version_id in (select id from policy_versions where policy_id = ${query.policyId})
       and split = ${query.split}
       ${query.env === undefined ? sql`` : sql`and env = ${query.env}`}
     group by policy_version_id, version, adapter_name
     order by version`);
  return rowsOf<Record<string, unknown>>(result).map((row) => ({
    policyVersionId: String(row.policy_version_id),
    version: Number(row.version),
    adapterName: String(row.adapter_name),
    episodes: Number(row.episodes),
    rewarded: Number(row.rewarded),
    errors: Number(row.errors),
    meanReward: row.mean_reward === null ? null : Number(row.mean_reward),
  }));
}
