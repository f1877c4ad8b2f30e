import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatMessage, ToolSpec } from '../../protocol/chat.ts';
import { toByteLevel } from './byte-level.ts';
import { createTokenizer } from './chat-tokenizer.ts';
import { qwenModelDir } from './test-fixtures.ts';
import { tinyTokenizerFiles } from './tiny-tokenizer.ts';

const files = tinyTokenizerFiles();
const tiny = createTokenizer(files.tokenizerJson, files.tokenizerConfig);
const model = files.tokenizerJson.model as { vocab: Record<string, number>; merges: string[] };

/** Deterministic pseudo-random numbers (a 32-bit LCG, Numerical Recipes constants). */
function lcg(seed: number) {
  let state = seed >>> 0;
  return (below: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % below;
  };
}

describe('tinyTokenizerFiles', () => {
  it('encodes text without merges byte by byte, ids equal to byte values', () => {
    // "Hi" → 'H' 0x48 = 72, 'i' 0x69 = 105; "😀" is UTF-8 F0 9F 98 80 = 240 159 152 128.
    expect(tiny.encode('Hi')).toEqual([72, 105]);
    expect(tiny.encode('😀')).toEqual([240, 159, 152, 128]);
    // "\t" is byte 9, "~" is 126.
    expect(tiny.encode('\t~')).toEqual([9, 126]);
  });

  it('merges each single-pre-token piece of the list into one token', () => {
    for (const piece of ['{"', '":', ' "', '"}}\n', 'arguments', 'name', ' the', 'assistant', '\n\n']) {
      const ids = tiny.encode(piece);
      expect(ids, JSON.stringify(piece)).toHaveLength(1);
      expect(tiny.idToToken(ids[0] as number)).toBe(toByteLevel(piece));
    }
    // "# Tools" is two pre-tokens ("#", " Tools"), so it stays two tokens.
    expect(tiny.encode('# Tools')).toHaveLength(2);
  });

  it('encodes each ChatML special to one id, after the BPE vocabulary', () => {
    const bpeSize = Object.keys(model.vocab).length;
    const specials = ['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<tool_call>', '</tool_call>'];
    specials.push('<tool_response>', '</tool_response>');
    specials.forEach((text, index) => {
      expect(tiny.encode(text)).toEqual([bpeSize + index]);
      expect(tiny.encode(`a${text}b`)).toEqual([97, bpeSize + index, 98]);
    });
    expect(files.tokenCount).toBe(bpeSize + 7);
    expect(files.specialTokens.eos).toBe(tiny.specialTokenIds['<|im_end|>']);
    expect(files.specialTokens.pad).toBe(tiny.specialTokenIds['<|endoftext|>']);
    expect(tiny.eosTokenIds).toEqual([files.specialTokens.imEnd]);
    expect(tiny.padTokenId).toBe(files.specialTokens.endOfText);
  });

  it('round-trips arbitrary UTF-8 (in NFC, as the NFC normalizer leaves it)', () => {
    const next = lcg(7);
    const ranges: [number, number][] = [
      [0x20, 0x7e],
      [0x09, 0x0d],
      [0xa0, 0x2ff],
      [0x300, 0x36f], // combining marks: NFC may fold them into the previous letter
      [0x4e00, 0x4fff],
      [0x1f300, 0x1faff],
      [0x10000, 0x10ffff],
    ];
    for (let sample = 0; sample < 200; sample++) {
      const points: number[] = [];
      for (let i = next(40); i >= 0; i--) {
        const [low, high] = ranges[next(ranges.length)] as [number, number];
        points.push(low + next(high - low + 1));
      }
      const text = String.fromCodePoint(...points);
      expect(tiny.decode(tiny.encode(text))).toBe(text.normalize('NFC'));
    }
    // The normalizer composes e + U+0301 into é (one code point, two UTF-8 bytes C3 A9 = 195 169).
    expect(tiny.encode('e\u0301')).toEqual([195, 169]);
  });

  it('matches a reference BPE (GPT-2 algorithm, Qwen2 split pattern written as a JS RegExp) on random text', () => {
    const split =
      /(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/gu;
    const ranks = new Map(model.merges.map((merge, rank) => [merge, rank]));
    const reference = (text: string): number[] =>
      [...text.normalize('NFC').matchAll(split)].flatMap(([preToken]) => {
        let word = [...toByteLevel(preToken)];
        for (;;) {
          let best = -1;
          for (let i = 0; i + 1 < word.length; i++) {
            const rank = ranks.get(`${word[i]} ${word[i + 1]}`);
            if (
              rank !== undefined &&
              (best === -1 || rank < (ranks.get(`${word[best]} ${word[best + 1]}`) ?? 0))
            )
              best = i;
          }
          if (best === -1) break;
          word = [...word.slice(0, best), `${word[best]}${word[best + 1]}`, ...word.slice(best + 2)];
        }
        return word.map((token) => model.vocab[token] as number);
      });
    const alphabet = [
      'the',
      ' the',
      'name',
      '{"',
      '":',
      ' "',
      '}}',
      '\n',
      '\n\n',
      ' ',
      '  ',
      'ing',
      'x',
      'Q',
      '7',
      'é',
      '😀',
      "'s",
      '\t',
      ',',
      '<',
      '>',
    ];
    const next = lcg(99);
    for (let sample = 0; sample < 300; sample++) {
      let text = '';
      for (let i = next(25); i >= 0; i--) text += alphabet[next(alphabet.length)];
      expect(tiny.encode(text), JSON.stringify(text)).toEqual(reference(text));
    }
  });

  it('gives each token its bytes, and decodes padding ids beyond the tokenizer to nothing', () => {
    expect([...tiny.tokenBytes(240)]).toEqual([240]);
    expect(new TextDecoder().decode(tiny.tokenBytes(tiny.encode(' the')[0] as number))).toBe(' the');
    expect(new TextDecoder().decode(tiny.tokenBytes(files.specialTokens.imEnd))).toBe('<|im_end|>');
    expect(files.vocabSize % 64).toBe(0);
    expect(files.vocabSize).toBeGreaterThanOrEqual(files.tokenCount);
    // Ids from tokenCount up to vocabSize are embedding rows with no token: they decode to nothing.
    expect(tiny.decode([72, files.tokenCount, 105])).toBe('Hi');
    expect([...tiny.tokenBytes(files.tokenCount)]).toEqual([]);
    expect(tiny.decode([])).toBe('');
    expect(() => tiny.decode([72, -1])).toThrow(/index 1/);
  });

  it('skips <|im_end|> but keeps tool tags when skipping specials, as Qwen does', () => {
    const ids = tiny.encode('<tool_call>x</tool_call><|im_end|>');
    expect(tiny.decode(ids, { skipSpecialTokens: true })).toBe('<tool_call>x</tool_call>');
  });

  it('writes a tokenizer.json that passes the checks Hugging Face tokenizers applies to BPE', () => {
    const ids = Object.values(model.vocab).sort((a, b) => a - b);
    expect(ids).toEqual(ids.map((_, index) => index)); // ids 0..n-1, no gaps or repeats
    for (const merge of model.merges) {
      const parts = merge.split(' ');
      expect(parts, merge).toHaveLength(2);
      const [left, right] = parts as [string, string];
      expect(model.vocab[left], merge).toBeDefined();
      expect(model.vocab[right], merge).toBeDefined();
      expect(model.vocab[left + right], merge).toBeDefined();
    }
    expect(new Set(model.merges).size).toBe(model.merges.length);
  });

  it('follows the format of Qwen’s own tokenizer.json', () => {
    const qwen = JSON.parse(readFileSync(join(qwenModelDir(), 'tokenizer.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    for (const key of ['normalizer', 'pre_tokenizer', 'post_processor', 'decoder', 'version']) {
      expect(files.tokenizerJson[key], key).toEqual(qwen[key]);
    }
    const qwenModel = qwen.model as Record<string, unknown>;
    expect(Object.keys(model).sort()).toEqual(Object.keys(qwenModel).sort());
    const qwenAdded = new Map(
      (qwen.added_tokens as { content: string }[]).map((token) => [token.content, token]),
    );
    for (const token of files.tokenizerJson.added_tokens as { id: number; content: string }[]) {
      expect({ ...token, id: 0 }).toEqual({ ...qwenAdded.get(token.content), id: 0 });
    }
  });

  it('is deterministic, and extra pieces add merges per pre-token', () => {
    expect(tinyTokenizerFiles()).toEqual(files);
    const extra = tinyTokenizerFiles({ extraPieces: ['get_weather'] });
    const withExtra = createTokenizer(extra.tokenizerJson, extra.tokenizerConfig);
    // Pre-tokens of "get_weather": "get" and "_weather" (punctuation joins the letters after it).
    expect(withExtra.encode('get_weather').map((id) => withExtra.idToToken(id))).toEqual(['get', '_weather']);
    expect(tiny.encode('get_weather').length).toBeGreaterThan(2);
    expect(() => tinyTokenizerFiles({ extraPieces: [''] })).toThrow(/non-empty/);
    expect(() => tinyTokenizerFiles({ vocabMultiple: 0 })).toThrow(/vocabMultiple/);
  });
});

describe('tiny chat template', () => {
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
  const call = {
    id: 'c1',
    type: 'function' as const,
    function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
  };
  const messages: ChatMessage[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: null, tool_calls: [call] },
    { role: 'tool', content: '18 C', tool_call_id: 'c1' },
    { role: 'assistant', content: '18 C.' },
  ];

  it('renders tools, a tool call and a tool result', () => {
    // Written from the template: tool signatures after the system text; the call's arguments parsed
    // from '{"city":"Paris"}' and printed by tojson with ", " / ": " separators.
    const expected = [
      '<|im_start|>system',
      'Be brief.',
      'Tools: get_weather(city)<|im_end|>',
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
      '18 C.<|im_end|>',
      '<|im_start|>assistant',
      '',
    ].join('\n');
    expect(tiny.applyChatTemplate(messages, { tools, addGenerationPrompt: true })).toBe(expected);
  });

  it('renders any parameter name, one that shadows a dict method (`items`, `keys`) too', () => {
    const listing: ToolSpec = {
      type: 'function',
      function: {
        name: 'add_items',
        parameters: {
          type: 'object',
          properties: { items: { type: 'array' }, keys: { type: 'string' }, values: { type: 'string' } },
        },
      },
    };
    const text = tiny.applyChatTemplate([{ role: 'user', content: 'q' }], { tools: [listing] });
    expect(text.split('\n')[0]).toBe('<|im_start|>system');
    expect(text).toContain('Tools: add_items(items, keys, values)<|im_end|>');
  });

  it('separates content and several calls by newlines, keeps non-JSON arguments verbatim, groups tool results', () => {
    const second = { id: 'c2', type: 'function' as const, function: { name: 'add', arguments: 'a=1' } };
    const text = tiny.applyChatTemplate([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'Checking.', tool_calls: [call, second] },
      { role: 'tool', content: 'r1', tool_call_id: 'c1' },
      { role: 'tool', content: 'r2', tool_call_id: 'c2' },
    ]);
    expect(text).toBe(
      '<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\nChecking.\n<tool_call>\n' +
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n<tool_call>\n' +
        '{"name": "add", "arguments": a=1}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\nr1\n' +
        '</tool_response>\n<tool_response>\nr2\n</tool_response><|im_end|>\n',
    );
  });

  it('prompts with exactly the text an assistant message starts with (the prefix property)', () => {
    for (let index = 0; index < messages.length; index++) {
      if (messages[index]?.role !== 'assistant') continue;
      const prompt = tiny.applyChatTemplate(messages.slice(0, index), { tools, addGenerationPrompt: true });
      const through = tiny.applyChatTemplate(messages.slice(0, index + 1), { tools });
      expect(through.startsWith(prompt)).toBe(true);
      expect(through.endsWith('<|im_end|>\n')).toBe(true);
    }
  });

  it('omits the system turn when there is neither a system message nor tools', () => {
    expect(tiny.applyChatTemplate([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true })).toBe(
      '<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(tiny.encodeChat([{ role: 'user', content: 'hi' }])).toEqual([
      files.specialTokens.imStart,
      ...tiny.encode('user'),
      10,
      104,
      105,
      files.specialTokens.imEnd,
      10,
    ]);
  });
});
