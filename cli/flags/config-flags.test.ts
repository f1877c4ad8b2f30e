// Flags and usage derived from a config schema's field docs: a small hand-written schema, read from
// argv and env into its nested input, and its usage lines written out by hand for comparison.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { configFields, documented } from '../../protocol/config-docs.ts';
import { intBetween, oneOf } from '../../protocol/config-fields.ts';
import { configOptions, readConfigFlags } from './config-flags.ts';
import { formatDefault, usageOptions } from './config-usage.ts';

const schema = z.strictObject({
  name: documented(z.string().optional(), {
    doc: 'who',
    flag: 'name',
    arg: 'NAME',
    env: 'X_NAME',
    section: 'A',
  }),
  inner: z
    .strictObject({
      rate: documented(z.number().default(5e-6), { doc: 'how fast', flag: 'rate', arg: 'X', section: 'B' }),
      size: documented(intBetween(1, 9).default(3), { doc: 'how big', flag: 'size', arg: 'N', section: 'B' }),
      kind: documented(oneOf(['a', 'b']).default('a'), {
        doc: 'which',
        flag: 'kind',
        arg: 'KIND',
        section: 'B',
      }),
      list: documented(z.array(z.string()).default(['p', 'q']), {
        doc: 'some',
        flag: 'list',
        arg: 'LIST',
        section: 'B',
      }),
    })
    .prefault({}),
  quiet: documented(z.boolean().default(true), {
    doc: 'talk',
    flagDoc: 'say less',
    flag: 'loud',
    sets: false,
    section: 'A',
  }),
  hidden: documented(z.number().default(1), { doc: 'no flag' }),
});
const fields = configFields(schema);

describe('config flags', () => {
  it('lists the documented fields with their paths and written defaults', () => {
    expect(fields.map((field) => [field.path.join('.'), field.kind, field.defaultValue])).toEqual([
      ['name', 'string', undefined],
      ['inner.rate', 'number', 5e-6],
      ['inner.size', 'number', 3],
      ['inner.kind', 'choice', 'a'],
      ['inner.list', 'list', ['p', 'q']],
      ['quiet', 'boolean', true],
      ['hidden', 'number', 1],
    ]);
  });

  it('makes parseArgs options: a value for fields with an ARG, a switch for the others', () => {
    expect(configOptions(fields)).toEqual({
      name: { type: 'string' },
      rate: { type: 'string' },
      size: { type: 'string' },
      kind: { type: 'string' },
      list: { type: 'string' },
      loud: { type: 'boolean' },
    });
  });

  it('reads argv into the nested input, with env fallbacks, numbers, lists and switches', () => {
    const input = readConfigFlags(fields, { rate: '0.5', list: 'x, y,', loud: true }, { X_NAME: 'env-name' });
    expect(input).toEqual({ name: 'env-name', inner: { rate: 0.5, list: ['x', 'y'] }, quiet: false });
    expect(readConfigFlags(fields, { name: 'flag' }, { X_NAME: 'env' })).toEqual({ name: 'flag' });
    expect(readConfigFlags(fields, {}, { X_NAME: '' })).toEqual({});
    expect(() => readConfigFlags(fields, { size: 'big' }, {})).toThrow('--size must be a number, got "big"');
  });

  it('collects every occurrence of a repeatable flag; its variable is one string', () => {
    const repeated = configFields(
      z.strictObject({
        urls: documented(z.union([z.string(), z.array(z.string())]).optional(), {
          doc: 'where',
          flag: 'url',
          arg: 'URL',
          repeatable: true,
          env: 'X_URLS',
        }),
      }),
    );
    expect(configOptions(repeated)).toEqual({ url: { type: 'string', multiple: true } });
    expect(readConfigFlags(repeated, { url: ['a', 'b,c'] }, { X_URLS: 'env' })).toEqual({
      urls: ['a', 'b,c'],
    });
    expect(readConfigFlags(repeated, {}, { X_URLS: 'd,e' })).toEqual({ urls: 'd,e' });
    expect(readConfigFlags(repeated, {}, {})).toEqual({});
    expect(usageOptions(repeated)).toBe('Options:\n  --url URL                where (repeatable; or X_URLS)');
  });

  it('writes one usage line per flag under its section, with choices, env and default', () => {
    expect(usageOptions(fields, ['B'])).toBe(
      [
        'B:',
        '  --rate X                 how fast (default 5e-6)',
        '  --size N                 how big (default 3)',
        '  --kind KIND              which: a | b (default a)',
        '  --list LIST              some (default p,q)',
        'A:',
        '  --name NAME              who (or X_NAME)',
        '  --loud                   say less',
      ].join('\n'),
    );
    expect([formatDefault(2e-4), formatDefault(1e-6), formatDefault(0.1), formatDefault(8192)]).toEqual([
      '2e-4',
      '1e-6',
      '0.1',
      '8192',
    ]);
  });
});
