import { describe, expect, it } from 'vitest';
import { fetchFailureMessage } from './fetch-failure-message.ts';

describe('fetchFailureMessage', () => {
  it("adds the cause's message or code when it says more than the message", () => {
    const refused = new TypeError('fetch failed', {
      cause: new Error('connect ECONNREFUSED 127.0.0.1:8000'),
    });
    expect(fetchFailureMessage(refused)).toBe('fetch failed (connect ECONNREFUSED 127.0.0.1:8000)');
    const coded = new TypeError('fetch failed', { cause: { code: 'ENOTFOUND' } });
    expect(fetchFailureMessage(coded)).toBe('fetch failed (ENOTFOUND)');
    const same = new Error('socket hang up', { cause: new Error('socket hang up') });
    expect(fetchFailureMessage(same)).toBe('socket hang up');
    expect(fetchFailureMessage(new Error('plain'))).toBe('plain');
    expect(fetchFailureMessage('thrown text')).toBe('thrown text');
  });
});
