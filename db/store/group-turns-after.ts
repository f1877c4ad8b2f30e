// A group's trajectories and the turns each stored after the index a reader already has: one cheap
// poll for a live view of a running group (the console's), instead of re-reading every turn.
import { asc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { type RolloutGroup, rolloutGroups } from '../schema/rollout-groups.ts';
import { type Trajectory, trajectories } from '../schema/trajectories.ts';
import { type TurnRow, turns } from '../schema/turns.ts';
import type { StoreDb } from '../store-db.ts';
import { id, int4 } from './fields.ts';
import { parseInput } from './parse-input.ts';
import { fromTrajectoryRow } from './trajectory-row.ts';
import { fromTurnRow } from './turn-row.ts';

const groupTurnsAfterSchema = z.object({
  groupId: id,
  /** Per trajectory id, the highest turn index the reader has; trajectories not named: all turns. */
  after: z.record(id, int4.min(-1)).default({}),
  limit: z.number().int().min(1).max(10_000).default(2000),
});
export type GroupTurnsAfterInput = z.input<typeof groupTurnsAfterSchema>;

export interface GroupTurnsAfter {
  readonly group: RolloutGroup;
  /** In start order, as getGroup gives them. */
  readonly trajectories: Trajectory[];
  /** By trajectory then index. */
  readonly turns: TurnRow[];
}

export async function groupTurnsAfter(db: StoreDb, input: GroupTurnsAfterInput): Promise<GroupTurnsAfter> {
  const query = parseInput(groupTurnsAfterSchema, input, 'groupTurnsAfter');
  const [group] = await db.select().from(rolloutGroups).where(eq(rolloutGroups.id, query.groupId));
  if (!group) throw new StoreError('not-found', `group ${query.groupId} does not exist`);
  const members = await db
    .select()
    .from(trajectories)
    .where(eq(trajectories.groupId, group.id))
    .orderBy(asc(trajectories.startedAt), asc(trajectories.id));
  const known = JSON.stringify(query.after);
  const rows = await db
    .select({ turn: turns })
    .from(turns)
    .innerJoin(trajectories, eq(trajectories.id, turns.trajectoryId))
    .where(
      sql`${trajectories.groupId} = ${group.id} and ${turns.index} > coalesce((${known}::jsonb ->> ${turns.trajectoryId}::text)::integer, -1)`,
    )
    .orderBy(asc(turns.trajectoryId), asc(turns.index))
    .limit(query.limit);
  return {
    group,
    trajectories: members.map(fromTrajectoryRow),
    turns: rows.map((row) => fromTurnRow(row.turn)),
  };
}
