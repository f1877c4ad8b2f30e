// Appending one turn, in one transaction. Idempotent on (trajectory, index): a retry of a stored turn
// is a no-op, a different turn at a stored index is a `conflict`, a new turn on a finished trajectory
// is `trajectory-closed`, and a turn that would leave a gap is a `conflict` (indexes run 0, 1, 2, …).
// A rollout runner passes its lease: the same statement that advances the counters renews it (the
// heartbeat costs no round trip), and a runner whose episode was taken over gets `lease-lost`.
import { type Turn, type TurnInput, turnInputSchema } from '../../protocol/turn.ts';
import { and, eq, sql } from 'drizzle-orm';
import { StoreError } from '../errors.ts';
import { trajectories } from '../schema/trajectories.ts';
import { turns } from '../schema/turns.ts';
import type { StoreDb } from '../store-db.ts';
import { parseInput } from './parse-input.ts';
import { leaseExpiry, type TrajectoryLease, trajectoryLeaseSchema } from './trajectory-leases.ts';
import { toTurnRow, turnDifference } from './turn-row.ts';

const keptTurnText = ['content', 'toolCalls', 'toolCallId', 'servedBy', 'metadata'];

export interface AppendTurnResult {
  readonly trajectoryId: string;
  readonly index: number;
  /** False when the call repeated a turn already stored. */
  readonly created: boolean;
}

export async function appendTurn(
  db: StoreDb,
  input: TurnInput,
  leaseInput?: TrajectoryLease,
): Promise<AppendTurnResult> {
  // Everything a model or a proxy client writes is kept (escaped when Postgres cannot hold it); only the
  // fields the store itself interprets (ids, role, the tool error code) are refused.
  const turn = parseInput(turnInputSchema, input, 'turn', { keepText: keptTurnText });
  const lease = leaseInput ? parseInput(trajectoryLeaseSchema, leaseInput, 'lease') : undefined;
  return db.transaction(async (tx) => {
    // The common case in two statements: advancing the trajectory's counters only when it is running
    // and `index` is the next one both checks the state and locks the row, so concurrent appends to
    // one trajectory queue here and see each other's counts.
    const [advanced] = await tx
      .update(trajectories)
      .set({
        turnCount: sql`${trajectories.turnCount} + 1`,
        promptTokenCount: sql`${trajectories.promptTokenCount} + ${turn.promptTokenCount ?? 0}`,
        completionTokenCount: sql`${trajectories.completionTokenCount} + ${turn.completionTokenIds?.length ?? 0}`,
        latencyMs: sql`${trajectories.latencyMs} + ${turn.latencyMs ?? 0}`,
        ...(lease ? { heartbeatAt: sql`now()`, leaseExpiresAt: leaseExpiry(lease.leaseSeconds) } : {}),
      })
      .where(
        and(
          eq(trajectories.id, turn.trajectoryId),
          eq(trajectories.status, 'running'),
          eq(trajectories.turnCount, turn.index),
          lease ? eq(trajectories.runner, lease.runner) : undefined,
        ),
      )
      .returning({ id: trajectories.id });
    if (advanced) {
      const inserted = await tx
        .insert(turns)
        .values(toTurnRow(turn))
        .onConflictDoNothing()
        .returning({ index: turns.index });
      if (inserted.length === 0) {
        // Only possible if rows were written around the store (turn_count behind the turns table).
        throw new StoreError(
          'conflict',
          `turn ${turn.index} of trajectory ${turn.trajectoryId} already exists`,
        );
      }
      return { trajectoryId: turn.trajectoryId, index: turn.index, created: true };
    }
    return explainRefusal(tx, turn, lease);
  });
}

/** Why the counters did not advance: a retry (no-op), or an error that says what is wrong. */
async function explainRefusal(
  tx: StoreDb,
  turn: Turn,
  lease: TrajectoryLease | undefined,
): Promise<AppendTurnResult> {
  const [trajectory] = await tx
    .select({ status: trajectories.status, turnCount: trajectories.turnCount, runner: trajectories.runner })
    .from(trajectories)
    .where(eq(trajectories.id, turn.trajectoryId));
  if (!trajectory) throw new StoreError('not-found', `trajectory ${turn.trajectoryId} does not exist`);
  if (turn.index < trajectory.turnCount) {
    const [stored] = await tx
      .select()
      .from(turns)
      .where(and(eq(turns.trajectoryId, turn.trajectoryId), eq(turns.index, turn.index)));
    if (!stored)
      throw new StoreError('conflict', `turn ${turn.index} of trajectory ${turn.trajectoryId} is missing`);
    const field = turnDifference(stored, turn);
    if (field) {
      throw new StoreError(
        'conflict',
        `turn ${turn.index} of trajectory ${turn.trajectoryId} is already stored with a different ${field}`,
      );
    }
    return { trajectoryId: turn.trajectoryId, index: turn.index, created: false };
  }
  if (trajectory.status !== 'running') {
    throw new StoreError(
      'trajectory-closed',
      `trajectory ${turn.trajectoryId} is ${trajectory.status}; it takes no more turns`,
    );
  }
  if (lease && trajectory.runner !== lease.runner) {
    throw new StoreError(
      'lease-lost',
      `${lease.runner} no longer runs trajectory ${turn.trajectoryId}: ${trajectory.runner ?? 'nobody'} holds it`,
    );
  }
  throw new StoreError(
    'conflict',
    `turn ${turn.index} of trajectory ${turn.trajectoryId} would leave a gap: the next index is ${trajectory.turnCount}`,
  );
}
