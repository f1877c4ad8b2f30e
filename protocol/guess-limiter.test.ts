// The guess limiter on an injected clock (no sleeping): five wrong keys a minute, then 429 with a
// Retry-After that holds even for a right key, lifted when it passes; the block doubling on each wrong
// key after it, capped; a success clearing it; the client map bounded; the log line keyless.
import { describe, expect, it } from 'vitest';
import { GuessLimiter, guessLimitDefaults } from './guess-limiter.ts';

function limiter() {
  const clock = { now: 1_000_000 };
  const lines: string[] = [];
  const guard = new GuessLimiter({ now: () => clock.now, log: (line) => lines.push(line) });
  return { guard, clock, lines };
}

describe('GuessLimiter', () => {
  it('blocks the sixth attempt within the window, for Retry-After seconds, right key or not', () => {
    const { guard, clock } = limiter();
    for (let attempt = 1; attempt <= 5; attempt++) {
      expect(guard.check('10.0.0.1')).toEqual({ allowed: true });
      guard.fail('10.0.0.1', 'POST /v1/rollouts');
      clock.now += 1000;
    }
    // 5 failures at t = 0..4 s; the 5th (t = 4 s) blocks for blockMs = 60 s: until t = 64 s. Now t = 5 s.
    const sixth = guard.check('10.0.0.1');
    expect(sixth).toEqual({ allowed: false, retryAfterSeconds: 59 });
    // Another client is not affected.
    expect(guard.check('10.0.0.2')).toEqual({ allowed: true });
    // The check comes before the key: a right key is refused the same way (the caller never compares).
    clock.now += 58_999;
    expect(guard.check('10.0.0.1')).toEqual({ allowed: false, retryAfterSeconds: 1 });
    // Once Retry-After has passed: allowed again.
    clock.now += 1;
    expect(guard.check('10.0.0.1')).toEqual({ allowed: true });
  });

  it('doubles the block on each wrong key after one, up to the cap, and a success clears it', () => {
    const { guard, clock } = limiter();
    const blockAfterFailure = () => {
      guard.fail('c', '/x');
      const verdict = guard.check('c');
      if (verdict.allowed) return 0;
      clock.now += verdict.retryAfterSeconds * 1000;
      return verdict.retryAfterSeconds;
    };
    const blocks = [];
    for (let i = 0; i < 4; i++) expect(blockAfterFailure()).toBe(0);
    for (let i = 0; i < 7; i++) blocks.push(blockAfterFailure());
    // 60 s, then 120, 240, 480, 900 (the 15-minute cap), 900, 900.
    expect(blocks).toEqual([60, 120, 240, 480, 900, 900, 900]);
    guard.succeed('c');
    expect(guard.check('c')).toEqual({ allowed: true });
    // Afresh: four more wrong keys pass unblocked.
    for (let i = 0; i < 4; i++) expect(blockAfterFailure()).toBe(0);
  });

  it('counts failures per window: four a minute never block', () => {
    const { guard, clock } = limiter();
    for (let minute = 0; minute < 10; minute++) {
      for (let i = 0; i < 4; i++) guard.fail('slow', '/x');
      expect(guard.check('slow').allowed).toBe(true);
      clock.now += guessLimitDefaults.windowMs;
    }
  });

  it('tracks at most maxClients clients under 100,000 distinct ones', () => {
    const { guard } = limiter();
    for (let i = 0; i < 100_000; i++) guard.fail(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, '/x');
    expect(guard.trackedClients).toBe(guessLimitDefaults.maxClients);
    // The most recent ones are the ones kept.
    for (let i = 0; i < 4; i++) guard.fail('10.1.134.159', '/x');
    expect(guard.check('10.1.134.159').allowed).toBe(false);
  });

  it('logs once per client per window and when a block starts, with address, route and count only', () => {
    const { guard, clock, lines } = limiter();
    for (let i = 0; i < 5; i++) guard.fail('192.0.2.7', 'POST /console/sign-in');
    expect(lines).toEqual([
      'edgerl auth-failure: client 192.0.2.7, route POST /console/sign-in, 1 wrong key(s) since the last success',
      'edgerl auth-failure: client 192.0.2.7, route POST /console/sign-in, 5 wrong key(s) since the last success; blocked for 60 s',
    ]);
    clock.now += 60_000;
    guard.fail('192.0.2.7', 'POST /console/sign-in');
    expect(lines[2]).toBe(
      'edgerl auth-failure: client 192.0.2.7, route POST /console/sign-in, 6 wrong key(s) since the last success; blocked for 120 s',
    );
    // A hostile address text is kept printable and short.
    guard.fail('evil\nclient', '/x');
    expect(lines.at(-1)).toContain('client evil?client,');
  });
});
