// The bound on tool calls run per assistant turn. Past it, the extra calls are not run: the stored
// assistant message keeps its first `max + 1` calls, and the last of those is answered by one refusal
// observation that counts the calls not run. Every call in the stored message is then answered, as chat
// APIs require (OpenAI refuses an assistant message whose tool_call ids are not all answered), and a
// reply of 5,000 calls costs max + 2 turns, not 5,001. The turn's completion token ids (what the
// trainer learns from) stay exactly as sampled. Pure.
import type { AssistantMessage, ToolCall } from '../../protocol/chat.ts';

export interface LimitedCalls {
  /** The message as stored and sent back to the policy. */
  readonly message: AssistantMessage;
  /** Calls of the reply that are not run (0 within the bound). */
  readonly refused: number;
}

export function limitToolCalls(message: AssistantMessage, max: number): LimitedCalls {
  const calls = message.tool_calls ?? [];
  if (calls.length <= max) return { message, refused: 0 };
  return { message: { ...message, tool_calls: calls.slice(0, max + 1) }, refused: calls.length - max };
}

/** The refusal observation answering the first call past the bound, for all `refused` of them. */
export function callLimitMessage(refused: number, max: number): string {
  return `not run: this reply made ${max + refused} tool calls and at most ${max} run per turn; this call and the ${refused - 1} after it were refused (not run). Make at most ${max} calls in one reply.`;
}

/**
 * Whether `call` (one of `message`'s own call objects) is past the bound in it: the one refusal
 * answers it. By position, not id: a model may give every call the same id.
 */
export function isPastCallLimit(message: AssistantMessage, call: ToolCall, max: number): boolean {
  return (message.tool_calls ?? []).indexOf(call) >= max;
}
