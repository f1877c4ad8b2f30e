import { describe, expect, it } from 'vitest';
import { withoutUndefined } from './without-undefined.ts';

describe('withoutUndefined', () => {
  it('drops undefined entries only, so a spread keeps the defaults they would have hidden', () => {
    const given = { a: undefined, b: 0, c: null, d: '', e: false, f: { g: undefined } };
    expect(withoutUndefined(given)).toEqual({ b: 0, c: null, d: '', e: false, f: { g: undefined } });
    expect(Object.keys(withoutUndefined(given))).toEqual(['b', 'c', 'd', 'e', 'f']);
    expect({ a: 1, b: 2, ...withoutUndefined({ a: undefined, b: 3 }) }).toEqual({ a: 1, b: 3 });
  });
});
