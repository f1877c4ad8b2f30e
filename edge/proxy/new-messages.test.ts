import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../protocol/chat.ts';
import { historyOrderIssue, newMessages } from './new-messages.ts';

const stored = [
  { role: 'system', content: 's', toolCallId: null },
  { role: 'user', content: 'u', toolCallId: null },
  { role: 'assistant', content: null, toolCallId: null },
  { role: 'tool', content: 'r', toolCallId: 'c1' },
];
const conversation: ChatMessage[] = [
  { role: 'system', content: 's' },
  { role: 'user', content: 'u' },
  {
    role: 'assistant',
    content: '',
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
  },
  { role: 'tool', content: 'r', tool_call_id: 'c1' },
  { role: 'user', content: 'more' },
];

describe('newMessages', () => {
  it('returns the messages after the stored turns, with the index of the first', () => {
    expect(newMessages(stored, conversation)).toEqual({
      ok: true,
      firstIndex: 4,
      messages: [conversation[4]],
    });
    expect(newMessages([], conversation.slice(0, 2))).toEqual({
      ok: true,
      firstIndex: 0,
      messages: conversation.slice(0, 2),
    });
    expect(newMessages(stored, conversation.slice(0, 4))).toEqual({ ok: true, firstIndex: 4, messages: [] });
  });

  it('names the first message that differs from its stored turn', () => {
    const edited = conversation.map((message, index) =>
      index === 1 ? { role: 'user' as const, content: 'U' } : message,
    );
    expect(newMessages(stored, edited)).toMatchObject({
      ok: false,
      field: 'messages.1',
      message: expect.stringMatching(/\(content\)/),
    });
    const wrongId = conversation.map((message, index) =>
      index === 3 ? { role: 'tool' as const, content: 'r', tool_call_id: 'c2' } : message,
    );
    expect(newMessages(stored, wrongId)).toMatchObject({
      ok: false,
      field: 'messages.3',
      message: expect.stringMatching(/tool_call_id/),
    });
    const wrongRole = [{ role: 'user' as const, content: 's' }, ...conversation.slice(1)];
    expect(newMessages(stored, wrongRole)).toMatchObject({
      ok: false,
      field: 'messages.0',
      message: expect.stringMatching(/role user, stored system/),
    });
  });

  it('refuses a conversation shorter than what is stored', () => {
    expect(newMessages(stored, conversation.slice(0, 3))).toMatchObject({ ok: false, field: 'messages' });
  });
});

describe('historyOrderIssue', () => {
  const call = { id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{}' } };

  it('takes a conversation the reply may follow: system, user, a call and its result', () => {
    expect(
      historyOrderIssue([
        { role: 'system', content: 's' },
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', content: 'r', tool_call_id: 'c1' },
      ]),
    ).toBeUndefined();
  });

  it('names the message in the client’s field names, and a last assistant message the reply would follow', () => {
    expect(
      historyOrderIssue([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', content: 'r', tool_call_id: 'c2' },
      ]),
    ).toEqual({
      field: 'messages.2.tool_call_id',
      message: 'answers no call of the assistant turn before it (its calls: "c1")',
    });
    expect(
      historyOrderIssue([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
      ]),
    ).toMatchObject({
      field: 'messages.1.role',
      message: expect.stringMatching(/ends with an assistant message/),
    });
  });
});
