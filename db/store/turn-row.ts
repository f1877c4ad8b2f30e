// The turn record (protocol/turn.ts) as a `turns` row and back, and the first field where a stored row
// and a retried append disagree: the difference between an idempotent retry and a conflicting write.
// Text Postgres cannot hold is written in protocol/stored-text.ts's escaped form, flagged per row.
import type { Turn } from '../../protocol/turn.ts';
import type { turns } from '../schema/turns.ts';
import type { TurnRow } from '../schema/turns.ts';
import { jsonEqual } from '../../protocol/canonical-json.ts';
import { escapeValue, needsEscaping, unescapeValue } from '../../protocol/stored-text.ts';

export type NewTurnRow = typeof turns.$inferInsert;

/** The columns a model or a client fills with free text: all escaped together when one needs it. */
const textFields = [
  'content',
  'toolCalls',
  'toolCallId',
  'servedBy',
  'metadata',
] as const satisfies readonly (keyof NewTurnRow & keyof TurnRow)[];

export function toTurnRow(turn: Turn): NewTurnRow {
  const row: NewTurnRow = {
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
    textEncoding: 'plain',
  };
  if (!textFields.some((field) => needsEscaping(row[field]))) return row;
  return { ...row, ...escapeValue(textOf(row)), textEncoding: 'escaped' };
}

/** A stored row with its text as it was written (unescaped when the row is escaped). */
export function fromTurnRow(row: TurnRow): TurnRow {
  return row.textEncoding === 'escaped' ? { ...row, ...unescapeValue(textOf(row)) } : row;
}

function textOf(row: NewTurnRow | TurnRow) {
  return {
    content: row.content ?? null,
    toolCalls: row.toolCalls ?? null,
    toolCallId: row.toolCallId ?? null,
    servedBy: row.servedBy ?? null,
    metadata: row.metadata ?? null,
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
  'textEncoding',
] as const satisfies readonly (keyof NewTurnRow & keyof TurnRow)[];

/** The name of the first field that differs, or undefined when the append repeats the stored turn.
 *  `stored` is the row as read (escaped when it is); the turn is encoded the same way to compare. */
export function turnDifference(stored: TurnRow, turn: Turn): string | undefined {
  const incoming = toTurnRow(turn);
  return comparedFields.find((field) => !jsonEqual(stored[field], incoming[field]));
}
