// Reading one trajectory with its turns in index order.
import { asc, eq } from 'drizzle-orm';
import { StoreError } from '../errors.ts';
import { type Trajectory, trajectories } from '../schema/trajectories.ts';
import { type TurnRow, turns } from '../schema/turns.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';
import { fromTrajectoryRow } from './trajectory-row.ts';
import { fromTurnRow } from './turn-row.ts';

export interface TrajectoryWithTurns {
  readonly trajectory: Trajectory;
  readonly turns: TurnRow[];
}

export async function getTrajectory(db: StoreDb, trajectoryId: string): Promise<TrajectoryWithTurns> {
  const key = parseInput(id, trajectoryId, 'trajectoryId');
  const [trajectory] = await db.select().from(trajectories).where(eq(trajectories.id, key));
  if (!trajectory) throw new StoreError('not-found', `trajectory ${trajectoryId} does not exist`);
  const rows = await db.select().from(turns).where(eq(turns.trajectoryId, key)).orderBy(asc(turns.index));
  return { trajectory: fromTrajectoryRow(trajectory), turns: rows.map(fromTurnRow) };
}
