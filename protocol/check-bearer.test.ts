// The shared bearer check on an injected clock: a missing header is no guess, a wrong key is one,
// five wrong keys block even the right key, and only an admin key clears the count.
import { describe, expect, it } from 'vitest';
import { checkBearer } from './check-bearer.ts';
import { GuessLimiter } from './guess-limiter.ts';
import { KeyRing } from './key-ring.ts';

const keys = new KeyRing({ admin: ['admin-key'], record: ['record-key'] });

function setUp() {
  const limiter = new GuessLimiter({ now: () => 1_000_000, log: () => {} });
  const check = (header: string | undefined) =>
    checkBearer({ header, client: '10.0.0.9', route: 'GET /v1/groups', keys, limiter });
  return { check };
}

describe('checkBearer', () => {
  it('tells missing, wrong and right keys apart, with the right key’s scopes', () => {
    const { check } = setUp();
    expect(check(undefined)).toEqual({ kind: 'missing' });
    expect(check('Basic abc')).toEqual({ kind: 'missing' });
    expect(check('Bearer nope')).toEqual({ kind: 'wrong' });
    expect(check('bearer  record-key ')).toEqual({ kind: 'ok', scopes: ['record'] });
    expect(check('Bearer admin-key')).toMatchObject({ kind: 'ok', scopes: ['admin'] });
  });

  it('counts wrong keys only; once blocked the right key is refused too; a record key clears nothing', () => {
    const { check } = setUp();
    for (let i = 0; i < 10; i++) expect(check(undefined)).toEqual({ kind: 'missing' });
    for (let i = 0; i < 4; i++) expect(check('Bearer nope')).toEqual({ kind: 'wrong' });
    // A record key's success leaves the four wrong keys counted: the fifth blocks.
    expect(check('Bearer record-key')).toMatchObject({ kind: 'ok' });
    expect(check('Bearer nope')).toEqual({ kind: 'wrong' });
    expect(check('Bearer admin-key')).toMatchObject({ kind: 'blocked' });
  });

  it('an admin key clears the count before the limit', () => {
    const { check } = setUp();
    for (let i = 0; i < 4; i++) check('Bearer nope');
    expect(check('Bearer admin-key')).toMatchObject({ kind: 'ok' });
    for (let i = 0; i < 4; i++) expect(check('Bearer nope')).toEqual({ kind: 'wrong' });
    expect(check('Bearer admin-key')).toMatchObject({ kind: 'ok' });
  });
});
