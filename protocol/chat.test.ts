import { describe, expect, it } from 'vitest';
import { chatMessageSchema } from './chat.ts';

describe('chatMessageSchema', () => {
  it('accepts an assistant tool call and names the bad field of a malformed one', () => {
    const ok = chatMessageSchema.safeParse({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"key":"a"}' } }],
    });
    expect(ok.success).toBe(true);
    const bad = chatMessageSchema.safeParse({ role: 'tool', content: 'x' });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(['tool_call_id']);
  });
});
