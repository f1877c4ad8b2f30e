// The proxy's kept heads: read back as set, replaced by a later set, dropped on delete, and the least
// recently used one evicted beyond the bound (a read counts as a use).
import { describe, expect, it } from 'vitest';
import { type TrajectoryHead, TrajectoryHeads } from './trajectory-heads.ts';

const head = (turnCount: number): TrajectoryHead => ({
  turnCount,
  historyDigest: turnCount === 0 ? '' : 'ab'.repeat(32),
  tools: null,
  route: { model: 'agent@1' },
  keyDigest: null,
});

describe('TrajectoryHeads', () => {
  it('reads back what was set, the latest set winning, until deleted', () => {
    const heads = new TrajectoryHeads(4);
    heads.set('a', head(0));
    heads.set('a', head(3));
    expect(heads.get('a')).toEqual(head(3));
    heads.delete('a');
    expect(heads.get('a')).toBeUndefined();
    expect(heads.size).toBe(0);
  });

  it('evicts the least recently used beyond its bound', () => {
    const heads = new TrajectoryHeads(2);
    heads.set('a', head(1));
    heads.set('b', head(2));
    expect(heads.get('a')).toEqual(head(1));
    heads.set('c', head(3));
    expect(heads.get('b')).toBeUndefined();
    expect(heads.get('a')).toEqual(head(1));
    expect(heads.get('c')).toEqual(head(3));
    expect(heads.size).toBe(2);
  });
});
