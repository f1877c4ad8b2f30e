import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { armIndex, pickArm, unitHash } from './pick-arm.ts';

describe('armIndex', () => {
  it('maps u over the cumulative weights (hand-computed)', () => {
    // weights 1, 3: total 4; arm 0 owns u·4 in [0, 1), arm 1 owns [1, 4).
    expect(armIndex([1, 3], 0)).toBe(0);
    expect(armIndex([1, 3], 0.2)).toBe(0); // 0.8 < 1
    expect(armIndex([1, 3], 0.25)).toBe(1); // 1.0 is the first value of arm 1
    expect(armIndex([1, 3], 0.999)).toBe(1);
    // weights 0, 2, 2: the zero-weight arm never wins, even at u = 0.
    expect(armIndex([0, 2, 2], 0)).toBe(1);
    expect(armIndex([0, 2, 2], 0.5)).toBe(2); // 2.0 is the first value of arm 2
    expect(armIndex([2, 2, 0], 0.9999999999999999)).toBe(1);
  });

  it('refuses u outside [0, 1) and weights that cannot split traffic', () => {
    expect(() => armIndex([1], 1)).toThrow(/u must be in \[0, 1\)/);
    expect(() => armIndex([1], -0.1)).toThrow(/u must be in/);
    expect(() => armIndex([0, 0], 0.5)).toThrow(/at least one weight/);
    expect(() => armIndex([1, -1], 0.5)).toThrow(/weights must be >= 0/);
  });
});

describe('unitHash', () => {
  it('is the first 52 bits of SHA-256("salt:key") over 2^52 (checked with node:crypto)', async () => {
    for (const [salt, key] of [
      ['exp-1', 'user-1'],
      ['3f1c0d0e-0000-4000-8000-000000000000', 'a session'],
      ['', ''],
    ] as const) {
      const hex = createHash('sha256').update(`${salt}:${key}`).digest('hex');
      expect(await unitHash(salt, key)).toBe(Number.parseInt(hex.slice(0, 13), 16) / 2 ** 52);
    }
  });

  it('splits many keys close to the weights', async () => {
    // 4000 keys, weights 1:3: arm 0 expects 1000; binomial sd = sqrt(4000 · 0.25 · 0.75) ≈ 27.4, so ±120 is over 4 sd.
    let first = 0;
    for (let user = 0; user < 4000; user++) {
      if (armIndex([1, 3], await unitHash('experiment', `user-${user}`)) === 0) first += 1;
    }
    expect(Math.abs(first - 1000)).toBeLessThan(120);
  });
});

describe('pickArm', () => {
  it('is armIndex over the arms in the order given, u from unitHash', async () => {
    const arms = [
      { name: 'a', weight: 0.25 },
      { name: 'b', weight: 0.75 },
    ];
    for (let user = 0; user < 20; user++) {
      const key = `user-${user}`;
      // Independent of pickArm's code: the slice of u = first 52 bits of SHA-256("exp:key") / 2^52.
      const hex = createHash('sha256').update(`exp:${key}`).digest('hex');
      const u = Number.parseInt(hex.slice(0, 13), 16) / 2 ** 52;
      expect((await pickArm('exp', arms, key))?.name).toBe(u < 0.25 ? 'a' : 'b');
    }
    expect(await pickArm('exp', [{ name: 'a', weight: 0 }], 'user-1')).toBeUndefined();
  });
});
