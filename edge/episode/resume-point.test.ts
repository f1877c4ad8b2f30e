import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolCall } from '../../protocol/chat.ts';
import { resumePoint } from './resume-point.ts';

const call = (id: string): ToolCall => ({
  id,
  type: 'function',
  function: { name: 'lookup', arguments: '{}' },
});

describe('resumePoint', () => {
  it('has nothing pending before the first assistant turn', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 's' },
      { role: 'user', content: 'u' },
    ];
    expect(resumePoint(messages)).toEqual({ assistantTurns: 0, pendingCalls: [] });
  });

  it("lists the last turn's calls that no tool message answers yet, in call order", () => {
    const last: ChatMessage = {
      role: 'assistant',
      content: null,
      tool_calls: [call('a'), call('b'), call('c')],
    };
    const messages: ChatMessage[] = [
      { role: 'user', content: 'u' },
      { role: 'assistant', content: null, tool_calls: [call('x')] },
      { role: 'tool', content: 'r', tool_call_id: 'x' },
      last,
      { role: 'tool', content: 'r', tool_call_id: 'b' },
    ];
    expect(resumePoint(messages)).toEqual({
      assistantTurns: 2,
      lastAssistant: last,
      pendingCalls: [call('a'), call('c')],
    });
  });

  it('has nothing pending after a final answer or answered calls', () => {
    const answer: ChatMessage = { role: 'assistant', content: '4' };
    expect(resumePoint([{ role: 'user', content: 'u' }, answer])).toEqual({
      assistantTurns: 1,
      lastAssistant: answer,
      pendingCalls: [],
    });
    const asked: ChatMessage = { role: 'assistant', content: null, tool_calls: [call('x')] };
    expect(resumePoint([asked, { role: 'tool', content: 'r', tool_call_id: 'x' }]).pendingCalls).toEqual([]);
  });
});
