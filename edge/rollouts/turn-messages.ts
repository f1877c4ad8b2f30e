// Stored turn rows back into chat messages (to resume an episode), with the last assistant turn's
// recorded finish reason, read through protocol's turn reader (which checks the record's version). Pure.
import type { TurnRow } from '../../db/schema/turns.ts';
import { turnToChatMessage } from '../../db/turn-to-chat-message.ts';
import { readTurnMetadata } from '../../protocol/turn-metadata.ts';
import type { ResumeFrom } from '../episode/resume-point.ts';

export function resumeFromTurns(turns: readonly TurnRow[]): ResumeFrom {
  const messages = turns.map(turnToChatMessage);
  const lastAssistant = turns.findLast((turn) => turn.role === 'assistant');
  const lastFinishReason = lastAssistant ? readTurnMetadata(lastAssistant).finishReason : undefined;
  // The tool time already spent, so a resumed run keeps to the episode's toolBudgetMs.
  const toolMs = turns.reduce((sum, turn) => sum + (turn.role === 'tool' ? (turn.latencyMs ?? 0) : 0), 0);
  return { messages, ...(lastFinishReason ? { lastFinishReason } : {}), ...(toolMs > 0 ? { toolMs } : {}) };
}
