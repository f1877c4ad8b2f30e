// Stored turn rows back into chat messages (to resume an episode), with the last assistant turn's
// recorded finish reason. Pure.
import type { ChatMessage } from '../../protocol/chat.ts';
import type { TurnRow } from '../../db/schema/turns.ts';
import type { ResumeFrom } from '../episode/resume-point.ts';
import { type FinishReason, finishReasons } from '../policy/policy-client.ts';

export function turnMessage(turn: TurnRow): ChatMessage {
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
      return { role: 'tool', content: turn.content ?? '', tool_call_id: turn.toolCallId ?? '' };
  }
}

export function resumeFromTurns(turns: readonly TurnRow[]): ResumeFrom {
  const lastAssistant = turns.findLast((turn) => turn.role === 'assistant');
  const reason = lastAssistant?.metadata?.finishReason;
  const lastFinishReason = (finishReasons as readonly unknown[]).includes(reason)
    ? (reason as FinishReason)
    : undefined;
  return { messages: turns.map(turnMessage), ...(lastFinishReason ? { lastFinishReason } : {}) };
}
