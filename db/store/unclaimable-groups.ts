// Why groups a trainer would train on are not its to claim: the complete (or scored) groups that fall
// outside its policy or its splits, or that another trainer holds now, counted by reason. What
// `edgerl train` prints when it finds nothing to claim, so "no complete group to train on" never hides
// groups that were rolled out without a policy (a bare --default-model) or for another one.
import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { taskSplits } from '../../protocol/statuses.ts';
import { rowsOf } from '../rows-of.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { claimableStatuses } from './group-transitions.ts';
import { parseInput } from './parse-input.ts';

const unclaimableGroupsSchema = z.object({
  policyId: id,
  /** The splits the trainer learns from (prepare-step.ts trainedSplits). */
  splits: z.array(z.enum(taskSplits)).min(1),
});
export type UnclaimableGroupsInput = z.input<typeof unclaimableGroupsSchema>;

export interface UnclaimableGroups {
  /** Rolled out on a model no policy version names (an edge's bare default model). */
  readonly withoutPolicy: number;
  /** Served by another policy's versions. */
  readonly otherPolicy: number;
  /** This policy's, on tasks held out from training (validation, eval). */
  readonly heldOut: number;
  /** This policy's and trainable, but leased by another trainer right now. */
  readonly leased: number;
}

export async function unclaimableGroups(
  db: StoreDb,
  input: UnclaimableGroupsInput,
): Promise<UnclaimableGroups> {
  const query = parseInput(unclaimableGroupsSchema, input, 'unclaimableGroups');
  const statuses = sql.join(
    claimableStatuses.map((status) => sql`${status}`),
    sql`, `,
  );
  const splits = sql.join(
    query.splits.map((split) => sql`${split}`),
    sql`, `,
  );
  const [row] = rowsOf<Record<keyof UnclaimableGroups, number>>(
    await db.execute(sql`
      select
        count(*) filter (where g.policy_version_id is null)::int as "withoutPolicy",
        count(*) filter (where v.policy_id <> ${query.policyId}::uuid)::int as "otherPolicy",
        count(*) filter (where v.policy_id = ${query.policyId}::uuid and t.split not in (${splits}))::int as "heldOut",
        count(*) filter (where v.policy_id = ${query.policyId}::uuid and t.split in (${splits})
          and g.lease_expires_at >= now())::int as "leased"
      from rollout_groups g
      left join policy_versions v on v.id = g.policy_version_id
      left join tasks t on t.id = g.task_id
      where g.status in (${statuses})`),
  );
  return {
    withoutPolicy: row?.withoutPolicy ?? 0,
    otherPolicy: row?.otherPolicy ?? 0,
    heldOut: row?.heldOut ?? 0,
    leased: row?.leased ?? 0,
  };
}
