// The one key check: a presented key matches only a whole known key (not a prefix, not a longer
// text), a key under several scopes holds their union, blanks are ignored.
import { describe, expect, it } from 'vitest';
import { equalBytes, KeyRing } from './key-ring.ts';

describe('KeyRing', () => {
  it('matches whole keys only and names their scopes', () => {
    const ring = new KeyRing({
      admin: ['admin-key'],
      rollout: ['roll-key', 'both-key'],
      record: ['both-key', ''],
    });
    expect(ring.size).toBe(3);
    expect(ring.match('admin-key')).toEqual({ key: 'admin-key', scopes: ['admin'] });
    expect(ring.match('roll-key')).toEqual({ key: 'roll-key', scopes: ['rollout'] });
    // Listed under two scopes: both (apiScopes' order).
    expect(ring.match('both-key')).toEqual({ key: 'both-key', scopes: ['record', 'rollout'] });
    for (const wrong of ['admin-ke', 'admin-keyx', '', 'ADMIN-KEY', ' admin-key']) {
      expect(ring.match(wrong)).toBeUndefined();
    }
    expect(ring.keysWith('admin')).toEqual(['admin-key']);
    expect(ring.keysWith('record')).toEqual(['both-key']);
  });

  it('compares bytes by their whole length', () => {
    expect(equalBytes(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(true);
    expect(equalBytes(new Uint8Array([1, 2]), new Uint8Array([1, 3]))).toBe(false);
    expect(equalBytes(new Uint8Array([1, 2]), new Uint8Array([1, 2, 3]))).toBe(false);
  });
});
