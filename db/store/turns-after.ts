// A trajectory's status and the turns stored after a given index: one cheap poll for a live view of a
// running episode (the edge's server-sent events), instead of re-reading every turn each time.
import { and, asc, eq, gt } from 'drizzle-orm';
import { z } from 'zod';
import { StoreError } from '../errors.ts';
import { type Trajectory, trajectories } from '../schema/trajectories.ts';
import { type TurnRow, turns } from '../schema/turns.ts';
import type { StoreDb } from '../store-db.ts';
import { id, int4 } from './fields.ts';
import { parseInput } from './parse-input.ts';
import { fromTrajectoryRow } from './trajectory-row.ts';
import { fromTurnRow } from './turn-row.ts';

const turnsAfterSchema = z.object({
  trajectoryId: id,
  /** Turns with a larger index come back; -1 for all of them. */
  afterIndex: int4.min(-1),
  limit: z.number().int().min(1).max(10_000).default(1000),
});
export type TurnsAfterInput = z.input<typeof turnsAfterSchema>;

export interface TurnsAfter {
  readonly trajectory: Trajectory;
  readonly turns: TurnRow[];
}

/** The trajectory is read first, so a status that is not `running` means no turn can follow those returned. */
export async function turnsAfter(db: StoreDb, input: TurnsAfterInput): Promise<TurnsAfter> {
  const query = parseInput(turnsAfterSchema, input, 'turnsAfter');
  const [trajectory] = await db.select().from(trajectories).where(eq(trajectories.id, query.trajectoryId));
  if (!trajectory) throw new StoreError('not-found', `trajectory ${query.trajectoryId} does not exist`);
  const rows = await db
    .select()
    .from(turns)
    .where(and(eq(turns.trajectoryId, query.trajectoryId), gt(turns.index, query.afterIndex)))
    .orderBy(asc(turns.index))
    .limit(query.limit);
  return { trajectory: fromTrajectoryRow(trajectory), turns: rows.map(fromTurnRow) };
}
