// Session cookies and CSRF tokens: HMACs of the key, never the key; bound to expiry and session;
// refused when tampered with, expired, or signed by a key no longer configured.
import { describe, expect, it } from 'vitest';
import { csrfToken, equalText, issueSession, sessionSeconds, verifySession } from './session-token.ts';

const now = 1_800_000_000;

describe('session tokens', () => {
  it('issues a cookie that names its expiry and holds no part of the key', async () => {
    const key = 'edge-key-abcdefghijklmnop';
    const cookie = await issueSession(key, now);
    expect(cookie).toMatch(/^\d+\.[A-Za-z0-9_-]{43}$/);
    expect(Number(cookie.split('.')[0])).toBe(now + sessionSeconds);
    expect(cookie).not.toContain(key);
    expect(cookie).not.toContain(btoa(key).slice(0, 8));
  });

  it('verifies against every configured key and names the one that signed', async () => {
    const cookie = await issueSession('second', now);
    expect(await verifySession(['first', 'second'], cookie, now + 10)).toBe('second');
    expect(await verifySession(['first'], cookie, now + 10)).toBeUndefined();
  });

  it('refuses an expired, a tampered or a malformed cookie', async () => {
    const cookie = await issueSession('key', now);
    expect(await verifySession(['key'], cookie, now + sessionSeconds)).toBeUndefined();
    const [expires, mac] = cookie.split('.') as [string, string];
    // A later expiry with the old signature: the signature covers the expiry.
    expect(await verifySession(['key'], `${Number(expires) + 1000}.${mac}`, now)).toBeUndefined();
    const flipped = `${expires}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    expect(await verifySession(['key'], flipped, now)).toBeUndefined();
    for (const bad of ['', 'key', `${expires}`, `${expires}.`, `x.${mac}`, `${expires}.${mac}=`]) {
      expect(await verifySession(['key'], bad, now)).toBeUndefined();
    }
  });

  it('derives a CSRF token per session and secret', async () => {
    const a = await csrfToken('key', 'session-a');
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await csrfToken('key', 'session-a')).toBe(a);
    expect(await csrfToken('key', 'session-b')).not.toBe(a);
    expect(await csrfToken('other', 'session-a')).not.toBe(a);
  });

  it('compares tokens by their whole text', () => {
    expect(equalText('abc', 'abc')).toBe(true);
    expect(equalText('abc', 'abd')).toBe(false);
    expect(equalText('abc', 'abcd')).toBe(false);
  });
});
