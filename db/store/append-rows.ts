// What the append statements (append-turns.ts, append-conversation.ts) share: the check of a batch of
// turns (one trajectory, consecutive indexes) and each turn as a record of the one jsonb parameter
// that carries a batch's rows (multi-row VALUES would take 14 parameters a turn, and Postgres allows
// 65,535). jsonb_to_recordset types each column, JSON arrays into int4[] / float8[]; numbers keep
// their bits: JSON.stringify writes the shortest decimal that reads back to the same float64, jsonb
// keeps that decimal as numeric, and float8in reads it back exactly.
import { type SQL, sql } from 'drizzle-orm';
import { type Turn, type TurnInput, turnInputSchema } from '../../protocol/turn.ts';
import { StoreError } from '../errors.ts';
import { parseInput } from './parse-input.ts';
import { type NewTurnRow, toTurnRow } from './turn-row.ts';

/** Fields a model or a proxy client fills with free text: kept (escaped when needed), never refused. */
const keptTurnText = ['content', 'toolCalls', 'toolCallId', 'servedBy', 'metadata'];

/** Turns of one call, most a step holds; far above any real step, and it bounds the statement. */
export const maxTurnsPerAppend = 10_000;

/** Parses a batch: at most maxTurnsPerAppend turns of one trajectory at consecutive indexes. */
export function parseTurnBatch(inputs: readonly TurnInput[]): Turn[] {
  if (inputs.length > maxTurnsPerAppend) {
    throw new StoreError('validation', `turns: at most ${maxTurnsPerAppend} turns per append`);
  }
  const turns = inputs.map((input) => parseInput(turnInputSchema, input, 'turn', { keepText: keptTurnText }));
  const first = turns[0] as Turn;
  for (const [offset, turn] of turns.entries()) {
    if (turn.trajectoryId !== first.trajectoryId) {
      throw new StoreError(
        'validation',
        `turns.${offset}: trajectoryId: one append takes turns of one trajectory`,
      );
    }
    if (turn.index !== first.index + offset) {
      throw new StoreError(
        'validation',
        `turns.${offset}: index: must be ${first.index + offset} (one append takes consecutive indexes)`,
      );
    }
  }
  return turns;
}

/** A turn's row as jsonb_to_recordset reads it: keys named as the columns, absent values as JSON null. */
export function turnRecord(turn: Turn, historyDigest?: string): Record<string, unknown> {
  const row: NewTurnRow = toTurnRow(turn);
  return {
    index: row.index,
    schema_version: row.schemaVersion,
    role: row.role,
    content: row.content ?? null,
    tool_calls: row.toolCalls ?? null,
    tool_call_id: row.toolCallId ?? null,
    tool_error: row.toolError ?? null,
    completion_token_ids: row.completionTokenIds ?? null,
    completion_logprobs: row.completionLogprobs ?? null,
    prompt_token_count: row.promptTokenCount ?? null,
    served_by: row.servedBy ?? null,
    latency_ms: row.latencyMs ?? null,
    metadata: row.metadata ?? null,
    text_encoding: row.textEncoding ?? 'plain',
    ...(historyDigest !== undefined ? { history_digest: historyDigest } : {}),
  };
}

/** The record type of turnRecord's rows, for `jsonb_to_recordset(…) as r(<this>)`. */
export function turnRecordColumns(withDigest: boolean): SQL {
  return sql.raw(
    `index int, schema_version int, role text, content text, tool_calls jsonb, tool_call_id text,
        tool_error text, completion_token_ids int[], completion_logprobs double precision[],
        prompt_token_count int, served_by text, latency_ms double precision, metadata jsonb,
        text_encoding text${withDigest ? ', history_digest text' : ''}`,
  );
}

/**
 * The turn columns the append statements insert, in turnRecord's order, then history_digest and the
 * writer (protocol/trajectory-writer.ts), which each statement supplies itself.
 */
export const insertedTurnColumns = sql.raw(
  `trajectory_id, index, schema_version, role, content, tool_calls, tool_call_id, tool_error,
        completion_token_ids, completion_logprobs, prompt_token_count, served_by, latency_ms, metadata,
        text_encoding, history_digest, writer`,
);

/** The same columns read from a record alias `r` (history_digest excepted: each statement has its own). */
export const recordColumns = sql.raw(
  `r.index, r.schema_version, r.role, r.content, r.tool_calls, r.tool_call_id, r.tool_error,
        r.completion_token_ids, r.completion_logprobs, r.prompt_token_count, r.served_by, r.latency_ms,
        r.metadata, r.text_encoding`,
);
