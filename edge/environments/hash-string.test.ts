import { describe, expect, it } from 'vitest';
import { hashString } from './hash-string.ts';

describe('hashString', () => {
  it('matches the published FNV-1a 32-bit test vectors', () => {
    // Vectors from the FNV reference test suite (Noll): "" → offset basis, "a", "foobar".
    expect(hashString('')).toBe(0x811c9dc5);
    expect(hashString('a')).toBe(0xe40c292c);
    expect(hashString('foobar')).toBe(0xbf9cf968);
  });
});
