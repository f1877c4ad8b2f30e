// The groups recorded episodes join (ingestTrajectories, an episode's `group`): found by the
// uploader's key or made, inside the ingest's transaction. A group's row is locked while the call adds
// its members, so concurrent uploads into one group take turns and never overfill it; once the
// members are inserted, the group counts them: it is `complete` (claimable for training) when its
// ended members reach its size, as a live group is when its last trajectory finishes.
import { sql } from 'drizzle-orm';
import { StoreError } from '../errors.ts';
import { rowsOf } from '../rows-of.ts';
import type { StoreDb } from '../store-db.ts';
import { fieldError, type PlannedEpisode } from './ingest-rows.ts';

export interface IngestedGroup {
  readonly key: string;
  readonly groupId: string;
  /** Trajectories the group holds now, of its `size`. */
  readonly members: number;
  readonly size: number;
  readonly complete: boolean;
}

interface GroupRow {
  readonly id: string;
  readonly ingest_key: string;
  readonly task_id: string;
  readonly size: number;
  readonly policy_version_id: string | null;
}

/** A statement whose snapshot missed a group a concurrent upload made runs again, this often at most. */
const maxAttempts = 3;

/** Each group key of the call with its group's id (made when new), its row locked; throws `conflict` for a group stored otherwise. */
export async function placeGroups(
  tx: StoreDb,
  episodes: readonly PlannedEpisode[],
  newId: () => string,
): Promise<Map<string, string>> {
  const wanted = new Map<string, PlannedEpisode>();
  for (const episode of episodes) {
    if (episode.group && !wanted.has(episode.group.key)) wanted.set(episode.group.key, episode);
  }
  if (wanted.size === 0) return new Map();
  const json = JSON.stringify(
    [...wanted.values()].map((episode) => ({
      id: newId(),
      ingest_key: episode.group?.key,
      task_id: episode.trajectory.taskId,
      size: episode.group?.size,
      policy_version_id: episode.trajectory.policyVersionId,
    })),
  );
  for (let attempt = 1; ; attempt++) {
    // A made group is returned by the insert; a stored one is locked by the select (whose snapshot
    // cannot see the rows this statement inserts, so the two never overlap).
    const rows = rowsOf<GroupRow>(
      await tx.execute(sql`
        with wanted as (
          select * from jsonb_to_recordset(${json}::jsonb)
            as g(id uuid, ingest_key text, task_id uuid, size int, policy_version_id uuid)
        ), made as (
          insert into rollout_groups (id, ingest_key, task_id, size, policy_version_id)
          select id, ingest_key, task_id, size, policy_version_id from wanted
          on conflict (ingest_key) do nothing
          returning id, ingest_key, task_id, size, policy_version_id
        ), stored as (
          select id, ingest_key, task_id, size, policy_version_id from rollout_groups
          where ingest_key in (select ingest_key from wanted)
          for update
        )
        select * from made union all select * from stored`),
    );
    const byKey = new Map(rows.map((row) => [row.ingest_key, row]));
    if (byKey.size < wanted.size) {
      // A concurrent upload made one of the groups after this statement's snapshot: read again.
      if (attempt < maxAttempts) continue;
      throw new StoreError('conflict', 'ingestTrajectories: a group kept changing; retry the upload');
    }
    for (const [key, episode] of wanted) {
      const row = byKey.get(key) as GroupRow;
      const differs =
        row.task_id !== episode.trajectory.taskId
          ? `is stored for task ${row.task_id}`
          : row.size !== episode.group?.size
            ? `is stored with size ${row.size}`
            : row.policy_version_id !== episode.trajectory.policyVersionId
              ? `is stored for policy version ${row.policy_version_id ?? 'none'}`
              : undefined;
      if (differs) throw fieldError('conflict', episode.position, 'group', `group "${key}" ${differs}`);
    }
    return new Map([...byKey].map(([key, row]) => [key, row.id]));
  }
}

/**
 * After the call's members are inserted: each group's count of ended members, and `complete` when it
 * reaches the size. Throws `conflict` (so nothing of the call stays) for a group the call would overfill.
 */
export async function countGroups(
  tx: StoreDb,
  groups: ReadonlyMap<string, string>,
  episodes: readonly PlannedEpisode[],
): Promise<IngestedGroup[]> {
  if (groups.size === 0) return [];
  const ids = [...groups.values()];
  const rows = rowsOf<{ id: string; size: number; members: number; ended: number; status: string }>(
    await tx.execute(sql`
      with counted as (
        select g.id, g.size, count(t.id)::int as members,
          (count(t.id) filter (where t.status <> 'running'))::int as ended
        from rollout_groups g left join trajectories t on t.group_id = g.id
        where g.id = any(${`{${ids.join(',')}}`}::uuid[])
        group by g.id, g.size
      ), advanced as (
        update rollout_groups g set
          ended_count = counted.ended,
          status = case when g.status = 'running' and counted.ended >= g.size then 'complete' else g.status end,
          completed_at = case when g.status = 'running' and counted.ended >= g.size then now() else g.completed_at end
        from counted
        where g.id = counted.id and counted.members <= g.size
        returning g.id, g.status
      )
      select counted.id, counted.size, counted.members, counted.ended, advanced.status
      from counted left join advanced on advanced.id = counted.id`),
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  return [...groups].map(([key, groupId]): IngestedGroup => {
    const row = byId.get(groupId);
    if (!row) throw new Error(`ingestTrajectories: group ${groupId} was not counted`);
    if (row.members > row.size) {
      const position = episodes.find((episode) => episode.group?.key === key)?.position ?? 0;
      throw fieldError(
        'conflict',
        position,
        'group',
        `group "${key}" would hold ${row.members} trajectories, more than its size ${row.size}`,
      );
    }
    return { key, groupId, members: row.members, size: row.size, complete: row.status === 'complete' };
  });
}
