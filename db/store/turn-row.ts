// The turn record (protocol/turn.ts) as a `turns` row, and the first field where a stored row and a
// retried append disagree: the difference between an idempotent retry and a conflicting write.
import type { Turn } from '../../protocol/turn.ts';
import type { turns } from '../schema/turns.ts';
import type { TurnRow } from '../schema/turns.ts';
import { jsonEqual } from '../../protocol/canonical-json.ts';

export type NewTurnRow = typeof turns.$inferInsert;

export function toTurnRow(turn: Turn): NewTurnRow {
  return {
    trajectoryId: turn.trajectoryId,
    index: turn.index,
    schemaVersion: turn.schemaVersion,
    role: turn.role,
    content: turn.content,
    toolCalls: turn.toolCalls ?? null,
    toolCallId: turn.toolCallId ?? null,
    toolError: turn.toolError ?? null,
    completionTokenIds: turn.completionTokenIds ?? null,
    completionLogprobs: turn.completionLogprobs ?? null,
    promptTokenCount: turn.promptTokenCount ?? null,
    servedBy: turn.servedBy ?? null,
    latencyMs: turn.latencyMs ?? null,
    metadata: turn.metadata ?? null,
  };
}

/** The fields a retry must repeat exactly; `createdAt` is the store's own. */
const comparedFields = [
  'schemaVersion',
  'role',
  'content',
  'toolCalls',
  'toolCallId',
  'toolError',
  'completionTokenIds',
  'completionLogprobs',
  'promptTokenCount',
  'servedBy',
  'latencyMs',
  'metadata',
] as const satisfies readonly (keyof NewTurnRow & keyof TurnRow)[];

/** The name of the first field that differs, or undefined when the append repeats the stored turn. */
export function turnDifference(stored: TurnRow, turn: Turn): string | undefined {
  const incoming = toTurnRow(turn);
  return comparedFields.find((field) => !jsonEqual(stored[field], incoming[field]));
}
