// findUnstorable against values built by hand: the path and the problem it reports, and that a value
// nested far past the limit is walked without overflowing the stack.
import { describe, expect, it } from 'vitest';
import { findUnstorable, maxJsonDepth, unstorablePath } from './unstorable-json.ts';

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < depth; level++) value = [value];
  return value;
}

describe('findUnstorable', () => {
  it('accepts plain JSON, surrogate pairs and non-JSON objects', () => {
    expect(findUnstorable({ a: [1, 'x', { b: null, c: '😀' }], d: true })).toBeUndefined();
    expect(findUnstorable({ when: new Date(0), bytes: new Uint8Array([0]) })).toBeUndefined();
  });

  it('names the path to a NUL or a lone surrogate, in values and keys', () => {
    expect(findUnstorable({ a: ['ok', 'x\u0000'] })).toEqual({ path: ['a', 1], problem: 'nul' });
    expect(findUnstorable({ a: { 'k\uDC00': 1 } })).toEqual({
      path: ['a', 'k\uDC00'],
      problem: 'lone-surrogate',
    });
    expect(findUnstorable({ a: 'x\uD83D' })).toEqual({ path: ['a'], problem: 'lone-surrogate' });
    expect(findUnstorable('\u0000')).toEqual({ path: [], problem: 'nul' });
  });

  it('allows exactly maxJsonDepth levels of containers and refuses one more', () => {
    expect(findUnstorable(nested(maxJsonDepth))).toBeUndefined();
    const found = findUnstorable(nested(maxJsonDepth + 1));
    expect(found?.problem).toBe('too-deep');
    expect(found?.path).toHaveLength(maxJsonDepth);
  });

  it('walks a value 20,000 deep without overflowing, naming its top-level field', () => {
    const found = findUnstorable({ metadata: nested(20_000) });
    expect(found?.problem).toBe('too-deep');
    if (found) expect(unstorablePath(found)).toEqual(['metadata']);
  });

  it('looks at depth only when told to skip text', () => {
    expect(findUnstorable({ a: '\u0000' }, { text: false })).toBeUndefined();
    expect(findUnstorable(nested(3), { maxDepth: 2 })?.problem).toBe('too-deep');
  });
});
