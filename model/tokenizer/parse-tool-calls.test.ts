import { describe, expect, it } from 'vitest';
import { parseAssistantOutput, toolCallStreamState } from './parse-tool-calls.ts';

const weather = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
const add = '<tool_call>{"name":"add","arguments":{"a":1,"b":2}}</tool_call>';

describe('parseAssistantOutput', () => {
  it('returns plain text as trimmed content, and null for blank text', () => {
    expect(parseAssistantOutput('  Paris is sunny.\n')).toEqual({
      content: 'Paris is sunny.',
      toolCalls: [],
      errors: [],
    });
    expect(parseAssistantOutput(' \n ')).toEqual({ content: null, toolCalls: [], errors: [] });
  });

  it('parses a call into OpenAI shape with arguments as a JSON string', () => {
    const parsed = parseAssistantOutput(weather);
    expect(parsed.content).toBeNull();
    expect(parsed.errors).toEqual([]);
    expect(parsed.toolCalls).toHaveLength(1);
    const [call] = parsed.toolCalls;
    expect(call?.id).toMatch(/^call_0_[0-9a-f]{8}$/);
    expect(call?.type).toBe('function');
    expect(call?.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
  });

  it('parses several calls and keeps the text around them as content', () => {
    const parsed = parseAssistantOutput(`Checking.\n${weather}\n${add}\nDone.`);
    // Outside text: "Checking.\n" + "\n" + "\nDone." → trimmed at the ends only.
    expect(parsed.content).toBe('Checking.\n\n\nDone.');
    expect(parsed.toolCalls.map((call) => call.function)).toEqual([
      { name: 'get_weather', arguments: '{"city":"Paris"}' },
      { name: 'add', arguments: '{"a":1,"b":2}' },
    ]);
    expect(parsed.toolCalls.map((call) => call.id.slice(0, 7))).toEqual(['call_0_', 'call_1_']);
  });

  it('gives the same text the same ids, and other text or another salt other ids', () => {
    const first = parseAssistantOutput(`${weather}${add}`);
    expect(parseAssistantOutput(`${weather}${add}`)).toEqual(first);
    const salted = parseAssistantOutput(`${weather}${add}`, { idSalt: 'turn-3' });
    expect(salted.toolCalls[0]?.id).not.toBe(first.toolCalls[0]?.id);
    const [a, b] = first.toolCalls;
    expect(a?.id.slice(-8)).not.toBe(b?.id.slice(-8)); // each call hashes the text up to its own end
    expect(parseAssistantOutput(` ${weather}`).toolCalls[0]?.id).not.toBe(a?.id);
  });

  it('accepts missing arguments as {} and double-encoded arguments', () => {
    const bare = parseAssistantOutput('<tool_call>{"name": "now"}</tool_call>');
    expect(bare.toolCalls[0]?.function.arguments).toBe('{}');
    const encoded = parseAssistantOutput('<tool_call>{"name": "f", "arguments": "{\\"x\\": 1}"}</tool_call>');
    expect(encoded.toolCalls[0]?.function.arguments).toBe('{"x":1}');
    expect(encoded.errors).toEqual([]);
  });

  it.each([
    ['<tool_call>{"name": "f", "arguments": {"x": 1}</tool_call>', /^tool call 1: invalid JSON \(/],
    ['<tool_call>{"arguments": {}}</tool_call>', /^tool call 1: missing "name"$/],
    ['<tool_call>{"name": 7}</tool_call>', /^tool call 1: "name" must be a non-empty string, got a number$/],
    ['<tool_call>{"name": ""}</tool_call>', /^tool call 1: "name" must be a non-empty string, got a string$/],
    [
      '<tool_call>{"name": "f", "arguments": [1]}</tool_call>',
      /^tool call 1: "arguments" must be a JSON object, got an array$/,
    ],
    [
      '<tool_call>{"name": "f", "arguments": "x=1"}</tool_call>',
      /^tool call 1: "arguments" is a string that is not JSON/,
    ],
    ['<tool_call>["f"]</tool_call>', /^tool call 1: expected a JSON object .* got an array$/],
    ['<tool_call>\n</tool_call>', /^tool call 1: empty <tool_call> block$/],
  ])('keeps a malformed call as text and names the problem: %s', (text, error) => {
    const parsed = parseAssistantOutput(`Let me see. ${text}`);
    expect(parsed.toolCalls).toEqual([]);
    expect(parsed.content).toBe(`Let me see. ${text}`);
    expect(parsed.errors).toHaveLength(1);
    expect(parsed.errors[0]).toMatch(error);
  });

  it('reports an unterminated call, and parses a call that reopens after it', () => {
    const open = parseAssistantOutput('x <tool_call>{"name": "f"');
    expect(open).toEqual({
      content: 'x <tool_call>{"name": "f"',
      toolCalls: [],
      errors: ['tool call 1: <tool_call> at character 2 is never closed with </tool_call>'],
    });
    const reopened = parseAssistantOutput(`<tool_call>{oops ${add}`);
    expect(reopened.content).toBe('<tool_call>{oops');
    expect(reopened.toolCalls.map((call) => call.function.name)).toEqual(['add']);
    expect(reopened.errors).toEqual([
      'tool call 1: <tool_call> at character 0 is never closed with </tool_call>',
    ]);
  });

  it('keeps a stray closing tag as text and notes it', () => {
    expect(parseAssistantOutput(`done</tool_call> ${add}`)).toMatchObject({
      content: 'done</tool_call>',
      errors: ['</tool_call> at character 4 closes no <tool_call>'],
    });
  });

  it('never throws, and every <tool_call> ends up either a call or content', () => {
    const fragments = [
      '<tool_call>',
      '</tool_call>',
      '{',
      '}',
      '"name"',
      '"arguments"',
      ':',
      ',',
      '"f"',
      '[',
      'x',
      '\n',
      ' ',
    ];
    let seed = 12345;
    const next = (below: number) => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; // LCG, Numerical Recipes constants
      return seed % below;
    };
    const count = (text: string, tag: string) => text.split(tag).length - 1;
    for (let sample = 0; sample < 500; sample++) {
      let text = '';
      for (let i = next(30); i > 0; i--) text += fragments[next(fragments.length)];
      const parsed = parseAssistantOutput(text);
      const content = parsed.content ?? '';
      expect(count(content, '<tool_call>') + parsed.toolCalls.length).toBe(count(text, '<tool_call>'));
      for (const call of parsed.toolCalls) expect(() => JSON.parse(call.function.arguments)).not.toThrow();
    }
  });
});

describe('toolCallStreamState', () => {
  it('holds back an open call and a trailing fragment of the opening tag', () => {
    expect(toolCallStreamState('Hi <tool_call>\n{"na')).toEqual({
      insideToolCall: true,
      streamableContent: 'Hi ',
      toolCalls: [],
    });
    expect(toolCallStreamState('Hi <tool')).toEqual({
      insideToolCall: false,
      streamableContent: 'Hi ',
      toolCalls: [],
    });
    expect(toolCallStreamState('Hi <b>')).toEqual({
      insideToolCall: false,
      streamableContent: 'Hi <b>',
      toolCalls: [],
    });
  });

  it('only ever appends to the content, and ends with the full parse’s content and ids', () => {
    const text = `Checking.\n${weather}\n<tool_call>{bad}</tool_call> then ${add} bye`;
    let previous = '';
    for (let end = 0; end <= text.length; end++) {
      const state = toolCallStreamState(text.slice(0, end));
      expect(state.streamableContent.startsWith(previous), `at ${end}`).toBe(true);
      previous = state.streamableContent;
    }
    const final = parseAssistantOutput(text);
    const streamed = toolCallStreamState(text);
    expect(streamed.streamableContent.trim()).toBe(final.content);
    expect(streamed.toolCalls).toEqual(final.toolCalls);
  });
});

describe('toolCallStreamState with complete: true', () => {
  it('releases an unclosed call and a tag fragment as content, matching the full parse untrimmed', () => {
    const unclosed = `Hi ${add} <tool_call>\n{"na`;
    const partial = toolCallStreamState(unclosed);
    const done = toolCallStreamState(unclosed, { complete: true });
    expect(partial.streamableContent).toBe('Hi  ');
    expect(done.streamableContent).toBe('Hi  <tool_call>\n{"na');
    expect(done.streamableContent.startsWith(partial.streamableContent)).toBe(true);
    expect(done.streamableContent.trim()).toBe(parseAssistantOutput(unclosed).content);
    expect(done.toolCalls).toEqual(parseAssistantOutput(unclosed).toolCalls);
    expect(toolCallStreamState('Hi <tool', { complete: true }).streamableContent).toBe('Hi <tool');
  });
});
