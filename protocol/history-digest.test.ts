import { describe, expect, it } from 'vitest';
import { emptyHistoryDigest, historyDigests, historyEntry } from './history-digest.ts';

describe('historyEntry', () => {
  it('covers what the history comparison covers, and nothing else', () => {
    expect(historyEntry({ role: 'assistant', content: null })).toBe(
      historyEntry({ role: 'assistant', content: '' }),
    );
    // A call id counts for tool results only.
    expect(historyEntry({ role: 'user', content: 'a', toolCallId: 'x' })).toBe(
      historyEntry({ role: 'user', content: 'a' }),
    );
    expect(historyEntry({ role: 'tool', content: 'a', toolCallId: 'x' })).not.toBe(
      historyEntry({ role: 'tool', content: 'a', toolCallId: 'y' }),
    );
    expect(historyEntry({ role: 'user', content: 'a' })).not.toBe(
      historyEntry({ role: 'system', content: 'a' }),
    );
  });

  it('writes text Postgres cannot hold as JSON escapes, so the entry itself is storable', () => {
    const entry = historyEntry({ role: 'user', content: 'nul \u0000 lone \ud800' });
    expect(entry.includes(String.fromCharCode(0))).toBe(false);
    expect(entry).toContain('\\u0000');
    expect(entry).toContain('\\ud800');
  });
});

describe('historyDigests', () => {
  const entries = ['a', 'b', 'c'].map((content) => historyEntry({ role: 'user', content }));

  it('chains: a prefix digest continues to the same digests as the whole', () => {
    const whole = historyDigests(entries);
    expect(whole).toHaveLength(3);
    expect(new Set(whole).size).toBe(3);
    for (const digest of whole) expect(digest).toMatch(/^[0-9a-f]{64}$/);
    const [first] = historyDigests(entries.slice(0, 1));
    expect(historyDigests(entries.slice(1), first)).toEqual(whole.slice(1));
    expect(historyDigests([], emptyHistoryDigest)).toEqual([]);
  });

  it('depends on the order of the turns', () => {
    const swapped = historyDigests([entries[1], entries[0]] as string[]);
    expect(swapped[1]).not.toBe(historyDigests(entries.slice(0, 2))[1]);
  });

  it('refuses a previous digest that is not hex', () => {
    expect(() => historyDigests(entries, 'not hex')).toThrow('previous is not a hex digest');
  });
});
