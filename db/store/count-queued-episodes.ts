// How many rollout episodes of one policy are queued or running: what the edge's admission bound
// (edge/rollouts/admit-episodes.ts) compares with before it starts another group. A rollout slot has a
// lease expiry from the moment it is queued (start-group.ts's awaitRunnerSeconds) until it ends, and
// only running rows are in trajectories_running_lease_idx, so the count reads that partial index's
// rows (the few episodes in flight), never the table's history. Client (proxy) trajectories carry no
// lease and are not counted: their pace is the client's.
import { and, count, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import { z } from 'zod';
import { policyVersions } from '../schema/policies.ts';
import { trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';

const countQueuedEpisodesSchema = z.object({
  /**
   * A version of the policy to count for: every version of its policy counts. Null: episodes served
   * by no registered version (a raw model name), counted as one policy.
   */
  policyVersionId: id.nullable(),
});
export type CountQueuedEpisodesInput = z.input<typeof countQueuedEpisodesSchema>;

export async function countQueuedEpisodes(db: StoreDb, input: CountQueuedEpisodesInput): Promise<number> {
  const { policyVersionId } = parseInput(countQueuedEpisodesSchema, input, 'countQueuedEpisodes');
  const inFlight = and(eq(trajectories.status, 'running'), isNotNull(trajectories.leaseExpiresAt));
  if (policyVersionId === null) {
    const [row] = await db
      .select({ episodes: count() })
      .from(trajectories)
      .where(and(inFlight, isNull(trajectories.policyVersionId)));
    return row?.episodes ?? 0;
  }
  const [row] = await db
    .select({ episodes: count() })
    .from(trajectories)
    .innerJoin(policyVersions, eq(policyVersions.id, trajectories.policyVersionId))
    .where(
      and(
        inFlight,
        eq(
          policyVersions.policyId,
          sql`(select ${policyVersions.policyId} from ${policyVersions} where ${policyVersions.id} = ${policyVersionId})`,
        ),
      ),
    );
  return row?.episodes ?? 0;
}
