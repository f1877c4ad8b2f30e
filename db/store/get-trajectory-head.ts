// One trajectory's row and the history digest of its last turn, in one query reading one turn row:
// what the recording proxy checks a request's history against (protocol/history-digest.ts) without
// reading the turns a long trajectory holds.
import { eq, getTableColumns, sql } from 'drizzle-orm';
import { emptyHistoryDigest } from '../../protocol/history-digest.ts';
import { StoreError } from '../errors.ts';
import { type Trajectory, trajectories } from '../schema/trajectories.ts';
import type { StoreDb } from '../store-db.ts';
import { id } from './fields.ts';
import { parseInput } from './parse-input.ts';
import { fromTrajectoryRow } from './trajectory-row.ts';

export interface TrajectoryHead {
  readonly trajectory: Trajectory;
  /**
   * The digest of turns 0..turnCount-1: '' for a trajectory with no turns, null when its last turn
   * has none (stored before the column, or after such a turn), so the turns must be compared.
   */
  readonly historyDigest: string | null;
  /** The digest of its trajectory key (null: no key, a runner's or a legacy row), for the proxy's writer check. */
  readonly keyDigest: string | null;
}

export async function getTrajectoryHead(db: StoreDb, trajectoryId: string): Promise<TrajectoryHead> {
  const key = parseInput(id, trajectoryId, 'trajectoryId');
  // The primary key (trajectory_id, index) finds the last turn; no turn before it is read.
  const [row] = await db
    .select({
      ...getTableColumns(trajectories),
      lastDigest: sql<string | null>`(select t.history_digest from turns t
        where t.trajectory_id = ${trajectories.id} and t.index = ${trajectories.turnCount} - 1)`,
    })
    .from(trajectories)
    .where(eq(trajectories.id, key));
  if (!row) throw new StoreError('not-found', `trajectory ${trajectoryId} does not exist`);
  const { lastDigest, ...trajectory } = row;
  return {
    trajectory: fromTrajectoryRow(trajectory),
    historyDigest: trajectory.turnCount === 0 ? emptyHistoryDigest : (lastDigest ?? null),
    keyDigest: trajectory.keyDigest,
  };
}
