import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ToolCall } from '../../protocol/chat.ts';
import { createTokenizer } from './chat-tokenizer.ts';
import { tinyTokenizerFiles } from './tiny-tokenizer.ts';
import { parseToolArguments, toolCallArguments } from './tool-call-arguments.ts';

const call = (text: string): ToolCall => ({
  id: 'c',
  type: 'function',
  function: { name: 'f', arguments: text },
});

afterEach(() => vi.restoreAllMocks());

describe('parseToolArguments', () => {
  it('parses a JSON object, maps blank text to {} and keeps anything else as written', () => {
    expect(parseToolArguments('{"city":"Paris","n":2}')).toEqual({ city: 'Paris', n: 2 });
    expect(parseToolArguments('  ')).toEqual({});
    expect(parseToolArguments('city=Paris')).toBe('city=Paris');
    expect(parseToolArguments('[1, 2]')).toBe('[1, 2]');
    expect(parseToolArguments('null')).toBe('null');
  });
});

describe('toolCallArguments', () => {
  it('parses a call once however often it is rendered, and again when its text changes', () => {
    const files = tinyTokenizerFiles();
    const tokenizer = createTokenizer(files.tokenizerJson, files.tokenizerConfig);
    const added = call('{"a":18,"b":21}');
    const messages = [
      { role: 'user' as const, content: 'Add.' },
      { role: 'assistant' as const, content: null, tool_calls: [added] },
    ];
    const parse = vi.spyOn(JSON, 'parse');
    const first = tokenizer.applyChatTemplate(messages);
    expect(tokenizer.applyChatTemplate(messages)).toBe(first);
    expect(parse.mock.calls.filter(([text]) => text === '{"a":18,"b":21}')).toHaveLength(1);
    expect(first).toContain('{"name": "f", "arguments": {"a": 18, "b": 21}}');

    const changed = { ...added, function: { ...added.function, arguments: '{"a":1}' } };
    expect(toolCallArguments(changed)).toEqual({ a: 1 });
    (added.function as { arguments: string }).arguments = '{"a":2}'; // same object, new text
    expect(toolCallArguments(added)).toEqual({ a: 2 });
  });
});
