import { describe, expect, it } from 'vitest';
import { canonicalJson, jsonEqual } from './canonical-json.ts';

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: null } })).toBe('{"a":{"c":null,"d":[2,1]},"b":1}');
    expect(jsonEqual({ role: 'user', content: 'x' }, { content: 'x', role: 'user' })).toBe(true);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual({ a: [{ c: 1, d: 2 }] }, { a: [{ d: 2, c: 1 }] })).toBe(true);
  });

  it('treats a missing value and null alike, and an undefined property as absent', () => {
    expect(jsonEqual(null, undefined)).toBe(true);
    expect(jsonEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(jsonEqual({ a: null }, {})).toBe(false);
  });

  it('drops undefined properties like JSON does, and refuses NaN instead of writing null', () => {
    expect(canonicalJson({ a: undefined, b: 1 })).toBe('{"b":1}');
    expect(() => canonicalJson({ score: Number.NaN })).toThrow(/\$\.score is NaN/);
  });
});
