// Why an append statement (append-turns.ts) stored nothing, read after it refused: a retry of stored
// turns (a no-op), stored leading turns with the rest still to append, or a typed error naming what is
// wrong. Runs only on that path, so a step that appends costs no query of this file.
import type { Turn } from '../../protocol/turn.ts';
import { and, between, eq } from 'drizzle-orm';
import { findPostgresError } from '../database-errors.ts';
import { StoreError } from '../errors.ts';
import { trajectories } from '../schema/trajectories.ts';
import { turns as turnsTable } from '../schema/turns.ts';
import type { StoreDb } from '../store-db.ts';
import { accessRefusal, type TrajectoryAccess } from './trajectory-access.ts';
import type { TrajectoryLease } from './trajectory-leases.ts';
import { turnDifference } from './turn-row.ts';

export interface AppendTurnResult {
  readonly trajectoryId: string;
  readonly index: number;
  /** False when the call repeated a turn already stored. */
  readonly created: boolean;
}

export type AppendRefusal =
  /** Every turn is stored as given. */
  | { readonly kind: 'repeated'; readonly results: AppendTurnResult[] }
  /** The leading turns are stored as given; `rest` still needs appending. */
  | { readonly kind: 'rest'; readonly results: AppendTurnResult[]; readonly rest: readonly Turn[] }
  /** Nothing explains the refusal now: the trajectory changed between the statements. */
  | { readonly kind: 'retry' };

/** Throws the StoreError the refusal deserves, or says how to go on. */
export async function explainRefusal(
  db: StoreDb,
  turns: readonly Turn[],
  lease: TrajectoryLease | undefined,
  access: TrajectoryAccess,
): Promise<AppendRefusal> {
  const first = turns[0] as Turn;
  const last = turns[turns.length - 1] as Turn;
  const [trajectory] = await db
    .select({
      status: trajectories.status,
      turnCount: trajectories.turnCount,
      runner: trajectories.runner,
      writer: trajectories.writer,
      keyDigest: trajectories.keyDigest,
    })
    .from(trajectories)
    .where(eq(trajectories.id, first.trajectoryId));
  if (!trajectory) throw new StoreError('not-found', `trajectory ${first.trajectoryId} does not exist`);
  // Another writer's trajectory first: not even a repeat of its stored turns is confirmed.
  const refused = accessRefusal(trajectory, access, first.trajectoryId);
  if (refused) throw refused;
  const storedTurns = turns.filter((turn) => turn.index < trajectory.turnCount);
  if (storedTurns.length > 0) {
    const upTo = Math.min(last.index, trajectory.turnCount - 1);
    const rows = await db
      .select()
      .from(turnsTable)
      .where(
        and(eq(turnsTable.trajectoryId, first.trajectoryId), between(turnsTable.index, first.index, upTo)),
      );
    const byIndex = new Map(rows.map((row) => [row.index, row]));
    for (const turn of storedTurns) {
      const stored = byIndex.get(turn.index);
      if (!stored) {
        throw new StoreError('conflict', `turn ${turn.index} of trajectory ${turn.trajectoryId} is missing`);
      }
      const field = turnDifference(stored, turn);
      if (field) {
        throw new StoreError(
          'conflict',
          `turn ${turn.index} of trajectory ${turn.trajectoryId} is already stored with a different ${field}`,
        );
      }
    }
    const results = storedTurns.map((turn) => ({
      trajectoryId: turn.trajectoryId,
      index: turn.index,
      created: false,
    }));
    const rest = turns.slice(storedTurns.length);
    return rest.length === 0 ? { kind: 'repeated', results } : { kind: 'rest', results, rest };
  }
  if (trajectory.status !== 'running') {
    throw new StoreError(
      'trajectory-closed',
      `trajectory ${first.trajectoryId} is ${trajectory.status}; it takes no more turns`,
    );
  }
  if (lease && trajectory.runner !== lease.runner) {
    throw new StoreError(
      'lease-lost',
      `${lease.runner} no longer runs trajectory ${first.trajectoryId}: ${trajectory.runner ?? 'nobody'} holds it`,
    );
  }
  if (first.index !== trajectory.turnCount) {
    throw new StoreError(
      'conflict',
      `turn ${first.index} of trajectory ${first.trajectoryId} would leave a gap: the next index is ${trajectory.turnCount}`,
    );
  }
  return { kind: 'retry' };
}

/**
 * A unique violation on turns (trajectory, index) from an append statement, as the store's conflict.
 * The statements insert only past the stored turn count, so this arises only when rows were written
 * around the store (turn_count behind the turns table). Anything else is returned as it came.
 */
export function turnExistsError(error: unknown, first: { index: number; trajectoryId: string }): unknown {
  if (findPostgresError(error)?.code !== '23505') return error;
  return new StoreError(
    'conflict',
    `turn ${first.index} of trajectory ${first.trajectoryId} already exists`,
    {
      cause: error,
    },
  );
}
