// A trajectory's `tools` as stored and back: a tool spec a proxy client sent may hold text Postgres
// cannot (a NUL, a lone surrogate), kept in protocol/stored-text.ts's escaped form, flagged by the
// row's `text_encoding`. Its other text (env, stickiness key, metadata) is refused instead (docs/store.md).
import type { ToolSpec } from '../../protocol/chat.ts';
import { escapeValue, needsEscaping, type TextEncoding, unescapeValue } from '../../protocol/stored-text.ts';
import type { Trajectory, TrajectoryRow } from '../schema/trajectories.ts';

export function toStoredTools(tools: ToolSpec[] | null): {
  tools: ToolSpec[] | null;
  textEncoding: TextEncoding;
} {
  return needsEscaping(tools)
    ? { tools: escapeValue(tools), textEncoding: 'escaped' }
    : { tools, textEncoding: 'plain' };
}

/**
 * A stored row with its tools as they were written, without its key digest: only the store's writer
 * checks read that (trajectory-access.ts), so no API answer or console page can carry it.
 */
export function fromTrajectoryRow(row: TrajectoryRow | Trajectory): Trajectory {
  const { keyDigest: _digest, ...trajectory } = row as TrajectoryRow;
  return trajectory.textEncoding === 'escaped'
    ? { ...trajectory, tools: unescapeValue(trajectory.tools) }
    : trajectory;
}
