// A trajectory's `tools` as stored and back: a tool spec a proxy client sent may hold text Postgres
// cannot (a NUL, a lone surrogate), kept in protocol/stored-text.ts's escaped form, flagged by the
// row's `text_encoding`. Its other text (env, stickiness key, metadata) is refused instead (docs/store.md).
import type { ToolSpec } from '../../protocol/chat.ts';
import { escapeValue, needsEscaping, type TextEncoding, unescapeValue } from '../../protocol/stored-text.ts';
import type { Trajectory } from '../schema/trajectories.ts';

export function toStoredTools(tools: ToolSpec[] | null): {
  tools: ToolSpec[] | null;
  textEncoding: TextEncoding;
} {
  return needsEscaping(tools)
    ? { tools: escapeValue(tools), textEncoding: 'escaped' }
    : { tools, textEncoding: 'plain' };
}

/** A stored row with its tools as they were written. */
export function fromTrajectoryRow(row: Trajectory): Trajectory {
  return row.textEncoding === 'escaped' ? { ...row, tools: unescapeValue(row.tools) } : row;
}
