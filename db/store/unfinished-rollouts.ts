// Trajectories of running rollout groups that have not ended: what an edge restarted on the same
// store dispatches again (each episode resumes from its stored turns). Live-traffic trajectories
// (no group) are not listed: their agent, not the edge, drives them.
import { and, asc, eq, isNotNull } from 'drizzle-orm';
import { rolloutGroups } from '../schema/rollout-groups.ts';
import { trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';

export interface UnfinishedRollout {
  readonly groupId: string;
  readonly trajectoryId: string;
}

export async function unfinishedRollouts(db: StoreDb, limit = 10_000): Promise<UnfinishedRollout[]> {
  const rows = await db
    .select({ groupId: trajectories.groupId, trajectoryId: trajectories.id })
    .from(trajectories)
    .innerJoin(rolloutGroups, eq(rolloutGroups.id, trajectories.groupId))
    .where(
      and(
        eq(trajectories.status, 'running'),
        eq(rolloutGroups.status, 'running'),
        isNotNull(trajectories.groupId),
      ),
    )
    .orderBy(asc(trajectories.startedAt), asc(trajectories.id))
    .limit(limit);
  return rows.map((row) => ({ groupId: row.groupId as string, trajectoryId: row.trajectoryId }));
}
