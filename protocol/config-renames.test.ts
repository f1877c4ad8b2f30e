import { describe, expect, it } from 'vitest';
import {
  deprecationLine,
  formerFlags,
  renamedVariables,
  withCurrentFlags,
  withCurrentVariables,
} from './config-renames.ts';

describe('withCurrentVariables', () => {
  it.each(Object.entries(renamedVariables))('reads %s as %s and reports it', (former, current) => {
    const { env, renamed } = withCurrentVariables({ [former]: 'value', UNRELATED: 'x' });
    expect(env[current]).toBe('value');
    expect(env.UNRELATED).toBe('x');
    expect(renamed).toEqual([[former, current]]);
  });

  it('lets a current name win, and reads a blank one as unset', () => {
    expect(withCurrentVariables({ DEFAULT_MODEL: 'old', EDGERL_DEFAULT_MODEL: 'new' })).toEqual({
      env: { DEFAULT_MODEL: 'old', EDGERL_DEFAULT_MODEL: 'new' },
      renamed: [],
    });
    const blank = withCurrentVariables({ DEFAULT_MODEL: 'old', EDGERL_DEFAULT_MODEL: ' ' });
    expect(blank.env.EDGERL_DEFAULT_MODEL).toBe('old');
    // A blank former name is unset too: nothing to read, nothing to report.
    expect(withCurrentVariables({ DEFAULT_MODEL: '' }).renamed).toEqual([]);
  });

  it('keeps every current name edgerl-prefixed, and DATABASE_URL as it is', () => {
    for (const current of Object.values(renamedVariables)) expect(current).toMatch(/^EDGERL_[A-Z_]+$/);
    expect(Object.keys(renamedVariables)).not.toContain('DATABASE_URL');
    expect(withCurrentVariables({ DATABASE_URL: 'postgres://h/db' }).renamed).toEqual([]);
  });
});

describe('withCurrentFlags', () => {
  it('spells --url as the current flag the command declares', () => {
    expect(withCurrentFlags(['--url', 'postgres://h/db', 'q'], new Set(['database-url']))).toEqual({
      args: ['--database-url', 'postgres://h/db', 'q'],
      renamed: [['--url', '--database-url']],
    });
    expect(withCurrentFlags(['--url=http://e:8787'], new Set(['edge-url', 'env'])).args).toEqual([
      '--edge-url=http://e:8787',
    ]);
    expect(Object.keys(formerFlags).sort()).toEqual(['database-url', 'edge-url']);
  });

  it('leaves a flag the command still declares, other flags and everything after --', () => {
    expect(withCurrentFlags(['--url', 'x'], new Set(['url', 'database-url'])).renamed).toEqual([]);
    expect(withCurrentFlags(['--url', 'x'], new Set(['json'])).args).toEqual(['--url', 'x']);
    expect(withCurrentFlags(['--', '--url'], new Set(['database-url']))).toEqual({
      args: ['--', '--url'],
      renamed: [],
    });
  });
});

describe('deprecationLine', () => {
  it('names every former name with its current one, in one line; none when there are none', () => {
    expect(
      deprecationLine([
        ['EDGE_API_KEY', 'EDGERL_EDGE_API_KEY'],
        ['--url', '--edge-url'],
      ]),
    ).toBe('deprecated names, still read for now: EDGE_API_KEY → EDGERL_EDGE_API_KEY, --url → --edge-url');
    expect(deprecationLine([])).toBeUndefined();
  });
});
