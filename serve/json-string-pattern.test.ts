// `pattern` and `format` against independent references: every string a random walk over the automaton
// writes matches the pattern under JavaScript's own RegExp (`u` flag, as JSON Schema validators read
// it) and validates under the zod schema the JSON schema came from; walks never get stuck, also where
// length bounds and the pattern together leave few lengths; hand-picked valid and invalid values go
// where RegExp says; what the regular subset leaves out is refused by name and path.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRng } from '../model/rng.ts';
import { feed, walk } from '../test/support/json-documents.ts';
import { jsonValue } from './grammar-node.ts';
import { compileJsonSchema } from './json-schema-grammar.ts';
import { formatPatterns } from './json-string-formats.ts';

const decoder = new TextDecoder();
const grammarOf = (schema: Record<string, unknown>) => jsonValue(compileJsonSchema(schema, 'schema'));

/** Walks until `count` strings ended; each is returned parsed. */
function sample(schema: Record<string, unknown>, count: number, seed: number): unknown[] {
  const grammar = grammarOf(schema);
  const rng = createRng(seed);
  const values: unknown[] = [];
  for (let tries = 0; values.length < count && tries < count * 20; tries++) {
    const result = walk(grammar, rng);
    expect(result.stuck).toBe(false);
    if (result.ended) values.push(JSON.parse(decoder.decode(result.bytes)));
  }
  expect(values).toHaveLength(count);
  return values;
}

// What zod 4 writes for everyday string checks (z.toJSONSchema), each with a few valid values.
const zodStrings: [string, z.ZodType, string[], string[]][] = [
  ['email', z.email(), ['a@b.co', 'x.y+z@q-r.example.org'], ['a@b', '@b.co', 'a b@c.de']],
  [
    'uuid',
    z.uuid(),
    ['123e4567-e89b-42d3-a456-426614174000'],
    ['123e4567-e89b-02d3-a456-426614174000', '123e4567e89b42d3a456426614174000'],
  ],
  [
    'iso datetime',
    z.iso.datetime(),
    ['2024-02-29T23:59:59Z', '1999-12-31T00:00:00.125Z'],
    ['2023-02-29T00:00:00Z', '2024-13-01T00:00:00Z', '2024-01-01T24:00:00Z', '2024-01-01 00:00:00Z'],
  ],
  ['iso date', z.iso.date(), ['2000-02-29', '2024-04-30'], ['1900-02-29', '2024-04-31']],
  ['iso time', z.iso.time(), ['23:59', '00:00:00.5'], ['24:00', '12:60']],
  ['ipv4', z.ipv4(), ['0.0.0.0', '255.255.255.255'], ['256.0.0.1', '01.2.3.4']],
  ['regex', z.string().regex(/^[a-z]{2,4}-\d+$/), ['ab-1', 'abcd-0042'], ['a-1', 'ab-', 'AB-1']],
  ['unanchored regex', z.string().regex(/x\d/), ['x1', 'abx9z'], ['x', 'ax-1']],
  ['startsWith and endsWith', z.string().startsWith('ab').endsWith('z'), ['abz', 'ab-z'], ['az', 'abc']],
  // One character: a random walk over 93 bytes rarely spells two in a row.
  ['includes', z.string().includes('q'), ['q', 'xq=1'], ['', 'Q=']],
  [
    'regex with lengths',
    z
      .string()
      .regex(/^(ab)+$/)
      .min(3)
      .max(7),
    ['abab', 'ababab'],
    ['ab', 'abababab'],
  ],
];

describe('pattern and format', () => {
  it.each(zodStrings)(
    'writes only what zod accepts, and never gets stuck (%s)',
    (_, zodSchema, good, bad) => {
      const schema = z.toJSONSchema(zodSchema) as Record<string, unknown>;
      for (const value of sample(schema, 40, 5)) {
        expect({ value, ok: zodSchema.safeParse(value).success }).toEqual({ value, ok: true });
      }
      const grammar = grammarOf(schema);
      for (const value of good) {
        expect({ value, ok: zodSchema.safeParse(value).success }).toEqual({ value, ok: true });
        expect({ value, ...feed(grammar, JSON.stringify(value)) }).toEqual({
          value,
          deadAt: -1,
          accepts: true,
        });
      }
      for (const value of bad) {
        expect({ value, ok: zodSchema.safeParse(value).success }).toEqual({ value, ok: false });
        expect({ value, accepts: feed(grammar, JSON.stringify(value)).accepts }).toEqual({
          value,
          accepts: false,
        });
      }
    },
  );

  it.each(Object.entries(formatPatterns))(
    'format %s alone writes only what its RegExp matches',
    (format, source) => {
      const regex = new RegExp(source, 'u');
      for (const value of sample({ type: 'string', format }, 40, 9)) {
        expect({ value, ok: regex.test(value as string) }).toEqual({ value, ok: true });
      }
    },
  );

  it('keeps pattern and length bounds together without dead ends', () => {
    // (a|aaaaa) with lengths 2..5 leaves "aaaaa" only: a walk after "aa" must go on to five.
    const five = sample({ type: 'string', pattern: '^(a|aaaaa)$', minLength: 2, maxLength: 5 }, 10, 3);
    expect(new Set(five)).toEqual(new Set(['aaaaa']));
    expect(() =>
      compileJsonSchema({ type: 'string', pattern: '^(a|aaaaa)$', minLength: 2, maxLength: 4 }, 's'),
    ).toThrow('admits no value');
    // Nothing past maxLength, though the pattern's state there accepts.
    expect(feed(grammarOf({ type: 'string', pattern: '^a+$', maxLength: 3 }), '"aaaa"').deadAt).toBe(4);
    // An enum is filtered by the pattern and the format through RegExp.
    const grammar = grammarOf({ enum: ['ab-1', 'zz', '2024-01-01'], pattern: '-' });
    expect(feed(grammar, '"ab-1"').accepts).toBe(true);
    expect(feed(grammar, '"2024-01-01"').accepts).toBe(true);
    expect(feed(grammar, '"zz"').accepts).toBe(false);
    // Characters that need escapes are never written, even where the pattern allows them.
    const quoted = grammarOf({ type: 'string', pattern: '^["\\\\a]$' });
    expect(feed(quoted, '"a"').accepts).toBe(true);
    expect(feed(quoted, '"\\""').accepts).toBe(false);
  });

  it.each([
    [{ type: 'string', pattern: '^(?=a)a' }, 'schema.pattern: lookahead and lookbehind are not supported'],
    [{ type: 'string', pattern: '(a)\\1' }, 'schema.pattern: backreferences are not supported'],
    [{ type: 'string', pattern: '\\bx' }, 'schema.pattern: word boundaries'],
    [{ type: 'string', pattern: '^a|b$' }, 'must be inside a group'],
    [{ type: 'string', pattern: 'a^b' }, '"^" is supported only at the start'],
    [{ type: 'string', pattern: '(' }, 'schema.pattern: is not an ECMA-262 regular expression'],
    [{ type: 'string', pattern: 'a{2000}' }, 'quantifier bounds above 1000'],
    [{ type: 'string', pattern: 'a', maxLength: 100_000 }, 'length bounds above 4096'],
    [
      { type: 'object', allOf: [{ required: ['a'] }] },
      'schema.allOf.0: "allOf" is supported only as a list of',
    ],
    [{ type: 'string', allOf: [{ pattern: '(?<=a)' }] }, 'schema.allOf.0.pattern: lookahead and lookbehind'],
    [
      { properties: { u: { type: 'string', format: 'uri' } } },
      'schema.properties.u.format: "uri" is not supported by guided decoding (supported: date-time',
    ],
  ])('refuses %j naming the keyword and its path', (schema, message) => {
    expect(() => compileJsonSchema(schema, 'schema')).toThrow(
      expect.objectContaining({
        code: 'bad-request',
        param: 'schema',
        message: expect.stringContaining(message),
      }),
    );
  });
});
