// Where a re-run episode picks up: given the messages already stored for its trajectory (a queue
// re-delivered it after a crash or a store outage), how many assistant turns were taken, which tool
// calls of the last assistant turn still lack an answer, and that turn itself. Pure.
import type { AssistantMessage, ChatMessage, ToolCall } from '../../protocol/chat.ts';
import type { FinishReason } from '../../protocol/finish-reason.ts';

export interface ResumeFrom {
  /** The stored messages in index order, system prompt first. */
  readonly messages: readonly ChatMessage[];
  /** The last assistant turn's finish reason, as stored in its metadata (decides how it ended). */
  readonly lastFinishReason?: FinishReason;
  /** Tool time the stored tool turns took, in ms: counted against the episode's toolBudgetMs. */
  readonly toolMs?: number;
}

export interface ResumePoint {
  readonly assistantTurns: number;
  /** The last assistant message, if any. */
  readonly lastAssistant?: AssistantMessage;
  /** Its tool calls that no tool message after it answers yet, in call order. */
  readonly pendingCalls: readonly ToolCall[];
}

export function resumePoint(messages: readonly ChatMessage[]): ResumePoint {
  let assistantTurns = 0;
  let lastAssistant: AssistantMessage | undefined;
  let answered = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') {
      assistantTurns += 1;
      lastAssistant = message;
      answered = new Set();
    } else if (message.role === 'tool') {
      answered.add(message.tool_call_id);
    }
  }
  const pendingCalls = (lastAssistant?.tool_calls ?? []).filter((call) => !answered.has(call.id));
  return { assistantTurns, ...(lastAssistant ? { lastAssistant } : {}), pendingCalls };
}
