// Stored turn rows back into chat messages (to resume an episode), with the last assistant turn's
// recorded finish reason. Pure.
import type { TurnRow } from '../../db/schema/turns.ts';
import { turnToChatMessage } from '../../db/turn-to-chat-message.ts';
import type { ResumeFrom } from '../episode/resume-point.ts';
import { type FinishReason, finishReasons } from '../policy/policy-client.ts';

export function resumeFromTurns(turns: readonly TurnRow[]): ResumeFrom {
  const lastAssistant = turns.findLast((turn) => turn.role === 'assistant');
  const reason = lastAssistant?.metadata?.finishReason;
  const lastFinishReason = (finishReasons as readonly unknown[]).includes(reason)
    ? (reason as FinishReason)
    : undefined;
  return { messages: turns.map(turnToChatMessage), ...(lastFinishReason ? { lastFinishReason } : {}) };
}
