// Which of a proxied request's messages are new: a chat client resends the whole conversation each
// call, so messages [0, n) must be the n turns already stored (compared by index: role, text and, for
// tool results, the call id) and the rest are appended. A client that rewrote or dropped history
// (summarised it, retried an older call) is refused, naming the first index that differs. Pure.
import type { ChatMessage } from '../../protocol/chat.ts';
import { type CheckedTurn, sequenceIssues } from '../../protocol/validate-turns.ts';

export interface StoredTurnView {
  readonly role: string;
  readonly content: string | null;
  readonly toolCallId: string | null;
}

export type NewMessages =
  | { readonly ok: true; readonly firstIndex: number; readonly messages: readonly ChatMessage[] }
  | { readonly ok: false; readonly field: string; readonly message: string };

export function newMessages(
  stored: readonly StoredTurnView[],
  messages: readonly ChatMessage[],
): NewMessages {
  const short = tooFewMessages(stored.length, messages.length);
  if (short) return short;
  for (const [index, turn] of stored.entries()) {
    const message = messages[index] as ChatMessage;
    const difference = differs(turn, message);
    if (difference) {
      return {
        ok: false,
        field: `messages.${index}`,
        message: `differs from stored turn ${index} (${difference}); the conversation so far cannot change`,
      };
    }
  }
  return { ok: true, firstIndex: stored.length, messages: messages.slice(stored.length) };
}

/** The refusal of a request with fewer messages than the trajectory holds turns, if it has fewer. */
export function tooFewMessages(storedCount: number, messageCount: number): NewMessages | undefined {
  if (messageCount >= storedCount) return undefined;
  return {
    ok: false,
    field: 'messages',
    message: `has ${messageCount} messages but the trajectory already holds ${storedCount} turns; send the whole conversation`,
  };
}

function differs(turn: StoredTurnView, message: ChatMessage): string | undefined {
  if (turn.role !== message.role) return `role ${message.role}, stored ${turn.role}`;
  // null and '' are the same empty assistant text to clients.
  if ((turn.content ?? '') !== (message.content ?? '')) return 'content';
  if (message.role === 'tool' && turn.toolCallId !== message.tool_call_id) return 'tool_call_id';
  return undefined;
}

/** The turn record's names for a message's fields, in the client's (`toolCallId` is `tool_call_id`). */
const messageFields: Readonly<Record<string, string>> = {
  toolCallId: 'tool_call_id',
  toolCalls: 'tool_calls',
};

/**
 * The refusal of a conversation whose roles no writer of turns may store (protocol/validate-turns.ts:
 * a tool result answering no call of the assistant message before it, two assistant messages in a
 * row), naming the first message at fault; the reply is an assistant turn, so the request may not end
 * with one. Checked on every call, whatever is stored already: the client resends the whole conversation.
 */
export function historyOrderIssue(
  messages: readonly ChatMessage[],
): { readonly field: string; readonly message: string } | undefined {
  const turns = messages.map(
    (message): CheckedTurn => ({
      role: message.role,
      ...(message.role === 'assistant' && message.tool_calls ? { toolCalls: message.tool_calls } : {}),
      ...(message.role === 'tool' ? { toolCallId: message.tool_call_id } : {}),
    }),
  );
  const issue = sequenceIssues([...turns, { role: 'assistant' }]).issues[0];
  if (!issue) return undefined;
  const [index, name] = issue.path as [number, string];
  if (index === messages.length) {
    return {
      field: `messages.${index - 1}.role`,
      message:
        'the conversation ends with an assistant message: the reply would be a second assistant turn in a row',
    };
  }
  return { field: `messages.${index}.${messageFields[name] ?? name}`, message: issue.message };
}
