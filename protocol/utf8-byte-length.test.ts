import { describe, expect, it } from 'vitest';
import { utf8ByteLength } from './utf8-byte-length.ts';

describe('utf8ByteLength', () => {
  it('agrees with TextEncoder on ASCII, 2-, 3- and 4-byte characters and a lone surrogate', () => {
    for (const text of ['', 'abc', 'é', '€uro', '😀 ok', 'a\ud800b', '\udc00', `${'x'.repeat(1000)}ü`]) {
      expect(utf8ByteLength(text)).toBe(new TextEncoder().encode(text).byteLength);
    }
  });
});
