// Reading a group with its trajectories (in start order) and, when asked, every trajectory's turns:
// what a trainer needs to score and train on a claimed group.
import { asc, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { type RolloutGroup, rolloutGroups } from '../schema/rollout-groups.ts';
import { type Trajectory, trajectories } from '../schema/trajectories.ts';
import { type TurnRow, turns } from '../schema/turns.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';
import { fromTrajectoryRow } from './trajectory-row.ts';
import { fromTurnRow } from './turn-row.ts';

export interface GroupWithTrajectories {
  readonly group: RolloutGroup;
  readonly trajectories: (Trajectory & { turns?: TurnRow[] })[];
}

const getGroupSchema = z.object({ groupId: id, includeTurns: z.boolean().default(false) });
export type GetGroupInput = z.input<typeof getGroupSchema>;

export async function getGroup(db: StoreDb, input: GetGroupInput): Promise<GroupWithTrajectories> {
  const query = parseInput(getGroupSchema, input, 'getGroup');
  const [group] = await db.select().from(rolloutGroups).where(eq(rolloutGroups.id, query.groupId));
  if (!group) throw new StoreError('not-found', `group ${query.groupId} does not exist`);
  const stored = await db
    .select()
    .from(trajectories)
    .where(eq(trajectories.groupId, group.id))
    .orderBy(asc(trajectories.startedAt), asc(trajectories.id));
  const members = stored.map(fromTrajectoryRow);
  if (!query.includeTurns || members.length === 0) return { group, trajectories: members };
  const rows = await db
    .select()
    .from(turns)
    .where(
      inArray(
        turns.trajectoryId,
        members.map((member) => member.id),
      ),
    )
    .orderBy(asc(turns.trajectoryId), asc(turns.index));
  const byTrajectory = new Map<string, TurnRow[]>();
  for (const row of rows.map(fromTurnRow)) {
    const list = byTrajectory.get(row.trajectoryId);
    if (list) list.push(row);
    else byTrajectory.set(row.trajectoryId, [row]);
  }
  return {
    group,
    trajectories: members.map((member) => ({ ...member, turns: byTrajectory.get(member.id) ?? [] })),
  };
}
