// Appending several turns of one exchange in order, in one transaction: all are stored or none is
// (the recording proxy stores a request's new messages with the reply they got). Each turn follows
// appendTurn's rules, so a repeated exchange is a no-op and a conflicting one stores nothing.
import type { TurnInput } from '../../protocol/turn.ts';
import type { StoreDb } from '../store-db.ts';
import { type AppendTurnResult, appendTurn } from './append-turn.ts';

export async function appendTurns(db: StoreDb, inputs: readonly TurnInput[]): Promise<AppendTurnResult[]> {
  return db.transaction(async (tx) => {
    const results: AppendTurnResult[] = [];
    for (const input of inputs) results.push(await appendTurn(tx, input));
    return results;
  });
}
