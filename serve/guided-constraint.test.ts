// Guided decoding on a toy vocabulary: ids 0–255 are bytes, 256 = "ab", 257 = "abc", 258 = "<x>"
// (an added token), 259 is EOS (no text), 260 an id the tokenizer does not know. Masks are compared
// with a brute-force one: every id whose bytes, stepped one by one, keep the automaton alive.
import { describe, expect, it } from 'vitest';
import { stateAccepts, startState, stepState } from './grammar-automaton.ts';
import { GuidedConstraint } from './guided-constraint.ts';
import { compileGuided, type GuidedSpec } from './guided-decoding.ts';
import { loadQwenTokenizer } from '../model/tokenizer/test-fixtures.ts';
import { guidedVocabulary } from './guided-vocabulary.ts';
import { VocabularyTrie } from './vocabulary-trie.ts';

const encoder = new TextEncoder();
const table = [
  ...Array.from({ length: 256 }, (_, b) => new Uint8Array([b])),
  encoder.encode('ab'),
  encoder.encode('abc'),
  encoder.encode('<x>'),
  new Uint8Array(0),
  new Uint8Array(0),
];
const code = (char: string) => char.charCodeAt(0);
const eos = 259;
const vocabulary = { tokenBytes: table, trie: VocabularyTrie.build(table, new Set()) };

function constraint(spec: GuidedSpec, stops: number[] = [eos]): GuidedConstraint {
  return new GuidedConstraint(compileGuided(spec).grammar, vocabulary, stops);
}

/** The ids allowed after `text`, sorted. */
function allowedAfter(c: GuidedConstraint, ids: number[]): number[] {
  const sequence = c.sequence();
  for (const id of ids) sequence.advance(id);
  return [...sequence.allowed()].sort((a, b) => a - b);
}

describe('guided choice', () => {
  const choice = (choices: string[]): GuidedSpec => ({ kind: 'choice', choices });

  it('allows every tokenization of a choice prefix, then only the stop tokens', () => {
    const c = constraint(choice(['abc', 'abd']));
    expect(allowedAfter(c, [])).toEqual([code('a'), 256, 257]);
    expect(allowedAfter(c, [256])).toEqual([code('c'), code('d')]);
    expect(allowedAfter(c, [code('a')])).toEqual([code('b')]);
    expect(allowedAfter(c, [257])).toEqual([eos]);
    expect(allowedAfter(c, [code('a'), code('b'), code('d')])).toEqual([eos]);
  });

  it('allows stopping or going on where one choice extends another, and added tokens by their text', () => {
    const c = constraint(choice(['a', 'ab<x>']));
    expect(allowedAfter(c, [code('a')])).toEqual([code('b'), eos]);
    expect(allowedAfter(c, [256])).toEqual([code('<'), 258]);
  });

  it('allows nothing after a complete choice when there is no stop token', () => {
    const c = constraint(choice(['ab']), []);
    expect(allowedAfter(c, [256])).toEqual([]);
  });

  it('refuses a token the mask did not allow', () => {
    const sequence = constraint(choice(['ab'])).sequence();
    expect(() => sequence.advance(code('x'))).toThrow(/does not continue/);
  });
});

describe('masks from the vocabulary trie', () => {
  const specs: [string, GuidedSpec][] = [
    ['any JSON object', { kind: 'json-object' }],
    [
      'a schema',
      {
        kind: 'json-schema',
        field: 'schema',
        schema: {
          type: 'object',
          properties: {
            abc: { type: 'string', maxLength: 2 },
            n: { type: 'integer', minimum: 3, maximum: 41 },
          },
          required: ['abc'],
          additionalProperties: false,
        },
      },
    ],
    [
      'an open object with known keys',
      {
        kind: 'json-schema',
        field: 'schema',
        schema: {
          type: 'object',
          properties: { abc: { type: 'integer' }, c: { enum: ['x'] } },
          required: ['abc'],
        },
      },
    ],
    [
      'strings under a pattern and a format',
      {
        kind: 'json-schema',
        field: 'schema',
        schema: {
          type: 'object',
          properties: {
            abc: { type: 'string', pattern: '^a[b<]?c*$', maxLength: 3 },
            ab: { type: 'string', format: 'date' },
          },
        },
      },
    ],
  ];
  // Texts whose every prefix is checked; `<x>` spelled by its token is only text inside strings.
  const texts = [
    '{"ab": "2024-02-29", "abc": "abc"}',
    '{"abc": "a<", "n": 40}',
    '{ "ab" : [1, -2.5e+3, "\\u00e9"], "c": {}}',
    '{"abc": 5, "abcd": "", "c": "x", "": 1}',
  ];

  it.each(specs)('equal a brute-force mask at every prefix (%s)', (_, spec) => {
    const c = constraint(spec);
    for (const text of texts) {
      const bytes = encoder.encode(text);
      let state = startState(compileGuided(spec).grammar);
      const sequence = c.sequence();
      for (let at = 0; at <= bytes.length; at++) {
        const expected: number[] = [];
        table.forEach((tokenBytes, id) => {
          if (tokenBytes.length === 0) return;
          let next: typeof state | undefined = state;
          for (const byte of tokenBytes) next = next && stepState(next, byte);
          if (next) expected.push(id);
        });
        if (stateAccepts(state)) expected.push(eos);
        expect([...sequence.allowed()].sort((a, b) => a - b)).toEqual(expected.sort((a, b) => a - b));
        const byte = bytes[at];
        if (byte === undefined) break;
        const next = stepState(state, byte);
        if (!next) break;
        state = next;
        sequence.advance(byte);
      }
    }
  });

  it('serves a recurring state from the cache', () => {
    const c = constraint({ kind: 'json-object' });
    const sequence = c.sequence();
    for (const byte of encoder.encode('{"')) sequence.advance(byte);
    sequence.allowed();
    const walks = c.stats.walks;
    for (const byte of encoder.encode('aaaa')) {
      sequence.advance(byte);
      sequence.allowed();
    }
    expect(c.stats.walks).toBe(walks);
    expect(c.stats.hits).toBeGreaterThanOrEqual(4);
  });
});

describe('on the Qwen vocabulary (151,669 tokens)', () => {
  const qwen = loadQwenTokenizer();
  const vocabulary = guidedVocabulary(qwen, 151936);
  const imEnd = qwen.specialTokenIds['<|im_end|>'] as number;
  const imStart = qwen.specialTokenIds['<|im_start|>'] as number;
  const toolCall = qwen.specialTokenIds['<tool_call>'] as number;

  it('allows the ids whose bytes fit, special tokens only as stops, at every token of a tool call', () => {
    const tools = [
      {
        name: 'lookup',
        parameters: { type: 'object', properties: { key: { type: 'string' } } },
        strict: true,
      },
    ];
    const guided = compileGuided({ kind: 'tool-calls', tools, mode: { kind: 'required', parallel: true } });
    const c = new GuidedConstraint(guided.grammar, vocabulary, [imEnd]);
    const sequence = c.sequence();
    let state = startState(guided.grammar);
    const ids = qwen.encode(
      '<tool_call>\n{"name": "lookup", "arguments": {"key": "北京 <tool_call>", "x": [1]}}\n</tool_call>',
    );
    for (const id of [...ids, imEnd]) {
      const expected: number[] = [];
      vocabulary.tokenBytes.forEach((bytes, tokenId) => {
        if (bytes.length === 0 || tokenId === imEnd || tokenId === imStart) return;
        let next: typeof state | undefined = state;
        for (const byte of bytes) next = next && stepState(next, byte);
        if (next && qwen.decode([tokenId], { skipSpecialTokens: true }) !== '') expected.push(tokenId);
      });
      if (stateAccepts(state)) expected.push(imEnd);
      const allowed = [...sequence.allowed()].sort((a, b) => a - b);
      expect(allowed).toEqual(expected.sort((a, b) => a - b));
      expect(allowed.includes(id)).toBe(true);
      if (id === imEnd) break;
      sequence.advance(id);
      for (const byte of vocabulary.tokenBytes[id] ?? []) state = stepState(state, byte) ?? state;
    }
    // `<tool_call>` is text (special: false) and spells itself inside the string.
    expect(ids).toContain(toolCall);
  });
});
