// Turns: the messages of an episode, one row per message, keyed by (trajectory, index) — the key that
// makes a retried append idempotent. Assistant turns keep the exact sampled token ids and logprobs.
import type { ToolCall } from '../../protocol/chat.ts';
import type { ToolErrorCode } from '../../protocol/tool-error-code.ts';
import type { TurnMetadata } from '../../protocol/turn-metadata.ts';
import { textEncodings } from '../../protocol/stored-text.ts';
import { trajectoryWriters } from '../../protocol/trajectory-writer.ts';
import { sql } from 'drizzle-orm';
import { check, doublePrecision, integer, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { checkOneOf, timestamptz } from './columns.ts';
import { trajectories } from './trajectories.ts';

export const turnRoles = ['system', 'user', 'assistant', 'tool'] as const;

export const turns = pgTable(
  'turns',
  {
    trajectoryId: uuid('trajectory_id')
      .notNull()
      .references(() => trajectories.id, { onDelete: 'cascade' }),
    index: integer('index').notNull(),
    /** The protocol/turn.ts version the record was written with. */
    schemaVersion: integer('schema_version').notNull(),
    role: text('role', { enum: turnRoles }).notNull(),
    content: text('content'),
    toolCalls: jsonb('tool_calls').$type<ToolCall[]>(),
    toolCallId: text('tool_call_id'),
    /** Tool turns whose tool failed: why (protocol/tool-error-code.ts). */
    toolError: text('tool_error').$type<ToolErrorCode>(),
    completionTokenIds: integer('completion_token_ids').array(),
    // double precision, not real: JSON numbers are float64, so the value the inference server sent
    // round-trips exactly and a retried append compares equal; real would round it to float32.
    completionLogprobs: doublePrecision('completion_logprobs').array(),
    promptTokenCount: integer('prompt_token_count'),
    /** The model or adapter name that answered (`agent@7`). */
    servedBy: text('served_by'),
    latencyMs: doublePrecision('latency_ms'),
    /** protocol/turn-metadata.ts; read it through readTurnMetadata, which checks schema_version. */
    metadata: jsonb('metadata').$type<TurnMetadata>(),
    /**
     * `escaped` when the row's text columns (content, tool_calls, tool_call_id, served_by, metadata) are
     * in protocol/stored-text.ts's escaped form, because one of them held a NUL or a lone surrogate;
     * the store's readers give back the original text.
     */
    textEncoding: text('text_encoding', { enum: textEncodings }).notNull().default('plain'),
    /**
     * protocol/history-digest.ts's digest of turns 0..index, computed by the append statement; null
     * for turns stored before the column (and every turn after one), which readers check in full.
     */
    historyDigest: text('history_digest'),
    /**
     * Who stored the turn (protocol/trajectory-writer.ts), set by the statement that appends it; a
     * runner resuming an episode refuses turns another writer stored. Null: stored before the column.
     */
    writer: text('writer', { enum: trajectoryWriters }),
    createdAt: timestamptz('created_at').notNull().defaultNow(),
  },
  (table) => [
    primaryKey({ name: 'turns_pkey', columns: [table.trajectoryId, table.index] }),
    checkOneOf('turns_role_check', table.role, turnRoles),
    check('turns_index_check', sql`${table.index} >= 0`),
    checkOneOf('turns_text_encoding_check', table.textEncoding, textEncodings),
    checkOneOf('turns_writer_check', table.writer, trajectoryWriters),
  ],
);

export type TurnRow = typeof turns.$inferSelect;
