// The JSON automaton against independent references, property-style with seeded generators: every
// document a generator writes for a schema (random whitespace, escapes, key order, optional keys) is
// accepted byte by byte and only at its end; every text the automaton accepts (random walks over its
// own allowed bytes, and random mutations of valid documents) parses with JSON.parse and validates
// with zod's own JSON-schema reader (z.fromJSONSchema); random walks never reach a state that can
// neither continue nor end. Unsupported keywords are refused by name.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRng } from '../model/rng.ts';
import { between, feed, generate, pick, walk } from '../test/support/json-documents.ts';
import { maxWhitespace } from './grammar-automaton.ts';
import { jsonValue } from './grammar-node.ts';
import { anyJsonObject, compileJsonSchema } from './json-schema-grammar.ts';

type Schema = Record<string, unknown>;
const encoder = new TextEncoder();

const schemas: [string, Schema][] = [
  [
    'multi-hop lookup arguments',
    { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
  ],
  [
    "RULER's judge answer",
    {
      type: 'object',
      properties: {
        scores: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              trajectory_id: { type: 'string', enum: ['t1', 't2', 'say "hi"'] },
              explanation: { type: 'string' },
              score: { type: 'number' },
            },
            required: ['trajectory_id', 'explanation', 'score'],
            additionalProperties: false,
          },
        },
      },
      required: ['scores'],
      additionalProperties: false,
    },
  ],
  [
    'bounds, enums, nullable and nested arrays',
    {
      type: 'object',
      properties: {
        count: { type: 'integer', minimum: -12, maximum: 250 },
        small: { type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 10 },
        name: { type: 'string', minLength: 2, maxLength: 5 },
        mode: { enum: ['fast', 'slow', 3, null, true] },
        tag: { anyOf: [{ type: 'string', maxLength: 3 }, { type: 'null' }] },
        grid: {
          type: 'array',
          items: { type: 'array', items: { type: 'integer' }, maxItems: 2 },
          minItems: 1,
          maxItems: 3,
        },
        flag: { type: ['boolean', 'null'] },
      },
      required: ['count', 'name', 'grid'],
      additionalProperties: false,
    },
  ],
  [
    'additional properties with a schema',
    {
      type: 'object',
      properties: { id: { const: 'x' } },
      required: ['id'],
      additionalProperties: { type: 'integer' },
    },
  ],
  ['any object', { type: 'object' }],
  [
    'an anyOf of two objects',
    {
      anyOf: [
        {
          type: 'object',
          properties: { a: { type: 'integer' } },
          required: ['a'],
          additionalProperties: false,
        },
        {
          type: 'object',
          properties: { b: { type: 'string', maxLength: 2 } },
          required: ['b'],
          additionalProperties: false,
        },
      ],
    },
  ],
];

describe('JSON-schema grammar', () => {
  it.each(schemas)('accepts every generated document byte by byte, and only at its end (%s)', (_, schema) => {
    const grammar = jsonValue(compileJsonSchema(schema, 'schema'));
    const validator = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    const rng = createRng(7);
    for (let i = 0; i < 150; i++) {
      const doc = generate(schema, rng);
      expect(JSON.parse(doc.text)).toEqual(doc.value);
      expect(validator.safeParse(doc.value).success).toBe(true);
      expect({ text: doc.text, ...feed(grammar, doc.text) }).toEqual({
        text: doc.text,
        deadAt: -1,
        accepts: true,
      });
      // A complete object or array is never also complete one byte earlier.
      expect(feed(grammar, doc.text.slice(0, -1)).accepts).toBe(false);
    }
  });

  it.each(schemas)('accepts only text that parses and validates, and never gets stuck (%s)', (_, schema) => {
    const grammar = jsonValue(compileJsonSchema(schema, 'schema'));
    const validator = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    const rng = createRng(11);
    const decoder = new TextDecoder('utf-8', { fatal: true });
    let ended = 0;
    for (let i = 0; i < 120; i++) {
      // From a random prefix of a valid document (empty one time in four): a free walk seldom spells
      // a required key among the other keys an open object allows.
      const doc = encoder.encode(generate(schema, rng).text);
      const cut = rng.next() < 0.25 ? 0 : between(rng, 0, doc.length - 1);
      const result = walk(grammar, rng, doc.slice(0, cut));
      expect(result.stuck).toBe(false);
      if (!result.ended) continue;
      ended += 1;
      const text = decoder.decode(result.bytes);
      const value: unknown = JSON.parse(text);
      expect({ text, valid: validator.safeParse(value).success }).toEqual({ text, valid: true });
    }
    expect(ended).toBeGreaterThan(60);
  });

  it.each(schemas)('accepts a mutated document only when it still parses and validates (%s)', (_, schema) => {
    const grammar = jsonValue(compileJsonSchema(schema, 'schema'));
    const validator = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    const rng = createRng(13);
    const noise = ['"', ',', '}', ']', '{', '[', ':', '0', '-', '.', 'e', ' ', '\\', 'a', 'n', '\u0001'];
    let rejected = 0;
    for (let i = 0; i < 300; i++) {
      const { text } = generate(schema, rng);
      const at = between(rng, 0, text.length - 1);
      const roll = rng.next();
      const mutated =
        roll < 0.33
          ? text.slice(0, at) + text.slice(at + 1)
          : roll < 0.66
            ? text.slice(0, at) + pick(rng, noise) + text.slice(at)
            : text.slice(0, at) + pick(rng, noise) + text.slice(at + 1);
      if (!feed(grammar, mutated).accepts) {
        rejected += 1;
        continue;
      }
      const value: unknown = JSON.parse(mutated);
      expect({ mutated, valid: validator.safeParse(value).success }).toEqual({ mutated, valid: true });
    }
    expect(rejected).toBeGreaterThan(100);
  });

  it('follows JSON Schema where zod does not: an absent type admits every type, each under its keywords', () => {
    const grammar = jsonValue(
      compileJsonSchema({ properties: { a: { type: 'string' } }, minLength: 2 }, 's'),
    );
    for (const text of ['5', 'null', '"ab"', '{"a": "x"}', '[1]', '{"b": 1}'])
      expect(feed(grammar, text).accepts).toBe(true);
    for (const text of ['"a"', '{"a": 1}']) expect(feed(grammar, text).accepts).toBe(false);
  });

  it('counts string lengths in code points', () => {
    const grammar = jsonValue(compileJsonSchema({ type: 'string', minLength: 2, maxLength: 2 }, 's'));
    expect(feed(grammar, '"😀é"').accepts).toBe(true);
    expect(feed(grammar, '"😀"').accepts).toBe(false);
    expect(feed(grammar, '"\\u00e9x"').accepts).toBe(true);
    expect(feed(grammar, '"abc"').deadAt).toBe(3);
  });

  it('rejects what RFC 8259 and RFC 3629 forbid', () => {
    const grammar = jsonValue(anyJsonObject());
    const bad: (string | Uint8Array)[] = [
      '{"a":1,}',
      '{"a" 1}',
      '{"a":01}',
      '{"a":1.}',
      '{"a":.5}',
      '{"a":1e}',
      '{"a":tru}',
      '{"a":[1 2]}',
      '{"a":"\u0001"}',
      '{"a":"\\x"}',
      '{"a":"\\u12g4"}',
      '{"a":1}}',
      '[1]',
      '"a"',
      `{${' '.repeat(maxWhitespace + 1)}}`,
      Uint8Array.from([0x7b, 0x22, 0xc0, 0x80, 0x22, 0x3a, 0x31, 0x7d]), // overlong NUL
      Uint8Array.from([0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x3a, 0x31, 0x7d]), // a surrogate as UTF-8
      Uint8Array.from([0x7b, 0x22, 0xf4, 0x90, 0x80, 0x80, 0x22, 0x3a, 0x31, 0x7d]), // past U+10FFFF
    ];
    for (const text of bad)
      expect({ text, accepts: feed(grammar, text).accepts }).toEqual({ text, accepts: false });
    for (const text of ['{}', ' {"":{"":[]}}', '{"a":-0.0e+0,"a":"\\ud800"}', '{"€":"\\/"}']) {
      expect({ text, accepts: feed(grammar, text).accepts }).toEqual({ text, accepts: true });
    }
  });

  it.each([
    [{ type: 'string', pattern: '^(?!a)' }, 'schema.pattern: lookahead and lookbehind are not supported'],
    [
      { type: 'object', properties: { a: { type: 'string', format: 'hostname' } } },
      'schema.properties.a.format: "hostname" is not supported',
    ],
    [{ type: 'string', contentEncoding: 'base64' }, 'schema: keyword "contentEncoding" is not supported'],
    [{ $ref: '#/$defs/x' }, 'keyword "$ref"'],
    [{ oneOf: [{ type: 'string' }] }, 'keyword "oneOf"'],
    [{ type: 'array', items: [{ type: 'string' }] }, 'schema.items: the array form'],
    [{ type: 'object', anyOf: [{ required: ['a'] }] }, '"anyOf" beside "type"'],
    [{ enum: [{ a: 1 }] }, 'objects or arrays are not supported'],
    [{ type: 'strin' }, 'schema.type: "strin" is not a JSON Schema type'],
    [{ type: 'object', properties: { a: false }, required: ['a'] }, 'schema: the schema admits no value'],
    [{ type: 'integer', minimum: 5, maximum: 4 }, 'admits no value'],
  ])('refuses %j with a 400 naming the problem', (schema, message) => {
    expect(() => compileJsonSchema(schema, 'schema')).toThrow(
      expect.objectContaining({
        code: 'bad-request',
        param: 'schema',
        message: expect.stringContaining(message),
      }),
    );
  });

  it('passes annotations over', () => {
    const grammar = jsonValue(
      compileJsonSchema(
        {
          $schema: 'x',
          title: 't',
          description: 'd',
          type: 'object',
          properties: { a: { type: 'integer', default: 1, examples: [2] } },
        },
        's',
      ),
    );
    expect(feed(grammar, '{"a": 3}').accepts).toBe(true);
  });
});
