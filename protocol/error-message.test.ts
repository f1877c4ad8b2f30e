import { describe, expect, it } from 'vitest';
import { errorMessageWithCause } from './error-message.ts';

describe('errorMessageWithCause', () => {
  it("adds the cause's message or code when the message does not already say it", () => {
    const refused = new TypeError('fetch failed', {
      cause: new Error('connect ECONNREFUSED 127.0.0.1:8000'),
    });
    expect(errorMessageWithCause(refused)).toBe('fetch failed (connect ECONNREFUSED 127.0.0.1:8000)');
    const coded = new TypeError('fetch failed', { cause: { code: 'ENOTFOUND' } });
    expect(errorMessageWithCause(coded)).toBe('fetch failed (ENOTFOUND)');
    const same = new Error('socket hang up', { cause: new Error('socket hang up') });
    expect(errorMessageWithCause(same)).toBe('socket hang up');
    expect(errorMessageWithCause(new Error('plain'))).toBe('plain');
    const restated = new Error('bad column (SQLSTATE 42703)', { cause: new Error('bad column') });
    expect(errorMessageWithCause(restated)).toBe('bad column (SQLSTATE 42703)');
    expect(errorMessageWithCause('thrown text')).toBe('thrown text');
  });
});
