import { describe, expect, it } from 'vitest';
import { isUuidLike } from './is-uuid-like.ts';

describe('isUuidLike', () => {
  it('takes any 8-4-4-4-12 hex string in either case, RFC 9562 version and variant or not', () => {
    expect(isUuidLike('0b1c8a52-3f4e-4d6a-9b7c-2e5f8a1d3c4b')).toBe(true); // a version 4 id (gen_random_uuid)
    expect(isUuidLike('0B1C8A52-3F4E-4D6A-9B7C-2E5F8A1D3C4B')).toBe(true);
    // Version digit 0, variant digit 0: not an RFC 9562 UUID (z.uuid() refuses it), but Postgres stores it.
    expect(isUuidLike('00000000-0000-0000-0000-000000000001')).toBe(true);
  });

  it('refuses names and near misses', () => {
    for (const reference of [
      'agent@3',
      'my-experiment',
      '0b1c8a52-3f4e-4d6a-9b7c-2e5f8a1d3c4',
      '0b1c8a52-3f4e-4d6a-9b7c-2e5f8a1d3c4b0',
      '0b1c8a523f4e4d6a9b7c2e5f8a1d3c4b',
      '{0b1c8a52-3f4e-4d6a-9b7c-2e5f8a1d3c4b}',
      ' 0b1c8a52-3f4e-4d6a-9b7c-2e5f8a1d3c4b',
      '0b1c8a52-3f4e-4d6a-9b7c-2e5f8a1d3c4g',
      '',
    ]) {
      expect(isUuidLike(reference), reference).toBe(false);
    }
  });
});
