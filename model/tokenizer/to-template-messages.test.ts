import { describe, expect, it } from 'vitest';
import { toTemplateMessages, toTemplateTools } from './to-template-messages.ts';

describe('toTemplateMessages', () => {
  it('copies only template fields, turns null content into "" and drops empty tool_calls', () => {
    const stored = { role: 'assistant' as const, content: null, tool_calls: [], completionTokenIds: [1, 2] };
    expect(toTemplateMessages([stored])).toEqual([{ role: 'assistant', content: '' }]);
    const call = { id: 'c', type: 'function' as const, function: { name: 'f', arguments: '{"x":1}' } };
    expect(toTemplateMessages([{ role: 'assistant', content: 'ok', tool_calls: [call] }])).toEqual([
      {
        role: 'assistant',
        content: 'ok',
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: { x: 1 } } }],
      },
    ]);
    expect(toTemplateMessages([{ role: 'tool', content: 'r', tool_call_id: 'c' }])).toEqual([
      { role: 'tool', content: 'r', tool_call_id: 'c' },
    ]);
  });
});

describe('toTemplateTools', () => {
  it('passes no tools for an empty list and drops undefined keys', () => {
    expect(toTemplateTools([])).toBeUndefined();
    expect(toTemplateTools([{ type: 'function', function: { name: 'f', description: undefined } }])).toEqual([
      { type: 'function', function: { name: 'f' } },
    ]);
  });
});
