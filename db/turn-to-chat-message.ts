// A stored turn row as the OpenAI-style chat message it was written from. The edge (resuming an
// episode), RULER (showing the judge a trajectory) and the trainer (rendering it) all read turns back
// this way, after checking the record's version (a row from a newer edgerl is refused). Pure.
import type { ChatMessage } from '../protocol/chat.ts';
import { assertNever } from '../protocol/statuses.ts';
import { checkTurnVersion } from '../protocol/turn-version.ts';
import type { TurnRow } from './schema/turns.ts';

/** Throws TurnVersionError (protocol/turn-version.ts) for a row written in a version this code does not read. */
export function turnToChatMessage(turn: TurnRow): ChatMessage {
  checkTurnVersion(turn.schemaVersion);
  switch (turn.role) {
    case 'system':
    case 'user':
      return { role: turn.role, content: turn.content ?? '' };
    case 'assistant':
      return {
        role: 'assistant',
        content: turn.content,
        ...(turn.toolCalls && turn.toolCalls.length > 0 ? { tool_calls: turn.toolCalls } : {}),
      };
    case 'tool':
      // The turn schema requires toolCallId on tool turns, so the fallback only guards old rows.
      return { role: 'tool', content: turn.content ?? '', tool_call_id: turn.toolCallId ?? '(missing)' };
    default:
      return assertNever(turn.role, 'turn role');
  }
}
