// Appending one turn: appendTurns (append-turns.ts) with a batch of one, so one statement, one round
// trip, with the same rules: idempotent on (trajectory, index), a different turn at a stored index or
// a gap is a `conflict`, a finished trajectory `trajectory-closed`, a runner taken over `lease-lost`.
// A rollout runner passes its lease: the statement that advances the counters renews it.
import type { TurnInput } from '../../protocol/turn.ts';
import type { StoreDb } from '../store-db.ts';
import type { AppendTurnResult } from './append-refusal.ts';
import { appendTurns } from './append-turns.ts';
import type { TrajectoryLease } from './trajectory-leases.ts';

export type { AppendTurnResult } from './append-refusal.ts';

export async function appendTurn(
  db: StoreDb,
  input: TurnInput,
  lease?: TrajectoryLease,
): Promise<AppendTurnResult> {
  const [result] = await appendTurns(db, [input], lease);
  if (!result) throw new Error('appendTurns returned no result for one turn');
  return result;
}
