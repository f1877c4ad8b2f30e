import { describe, expect, it } from 'vitest';
import { batchAdvantages, groupAdvantages } from './advantages.ts';
import { expectClose } from '../../test/support/max-difference.ts';

describe('groupAdvantages', () => {
  it('mean-centres without scaling (Dr. GRPO)', () => {
    // mean = (0.2 + 0.5 + 0.8) / 3 = 0.5 → advantages [−0.3, 0, 0.3]
    // population var = (0.09 + 0 + 0.09) / 3 = 0.06 → std = √0.06 = 0.24494897
    const result = groupAdvantages([0.2, 0.5, 0.8], { scale: 'none' });
    expectClose(result.advantages, [-0.3, 0, 0.3], 1e-12);
    expect(result.mean).toBeCloseTo(0.5, 12);
    expect(result.std).toBeCloseTo(0.24494897, 8);
    expect(result.noSignal).toBe(false);
  });

  it('divides by population std + eps with group scaling (DeepSeekMath)', () => {
    // [0.2, 0.5, 0.8]: ±0.3 / (0.24494897 + 1e-6) = ±1.22473987 (vs ±1.22474487 without eps)
    const result = groupAdvantages([0.2, 0.5, 0.8], { scale: 'group' });
    expectClose(result.advantages, [-1.22473987, 0, 1.22473987], 1e-7);
    // [1, 0, 0, 1]: mean 0.5, deviations ±0.5, std √(4·0.25/4) = 0.5; eps 0 → exactly ±1
    expectClose(groupAdvantages([1, 0, 0, 1], { scale: 'group', eps: 0 }).advantages, [1, -1, -1, 1], 1e-12);
  });

  it('records groups without spread as no signal, with zero advantages', () => {
    const flat = groupAdvantages([0.7, 0.7, 0.7], { scale: 'group' });
    expect(flat.advantages).toEqual([0, 0, 0]);
    expect(flat.noSignal).toBe(true);
    expect(flat.mean).toBeCloseTo(0.7, 12); // (0.7 + 0.7 + 0.7) / 3 carries float rounding
    expect(flat.std).toBeCloseTo(0, 12);
    // within the 1e-9 tolerance: still no signal, even though the std is not exactly 0
    expect(groupAdvantages([0.5, 0.5 + 1e-12], { scale: 'group' }).noSignal).toBe(true);
    expect(groupAdvantages([0.5, 0.5 + 1e-6], { scale: 'none' }).noSignal).toBe(false);
    expect(groupAdvantages([1], { scale: 'none' }).noSignal).toBe(true);
  });

  it('names bad input', () => {
    expect(() => groupAdvantages([], { scale: 'none' })).toThrow(/no rewards/);
    expect(() => groupAdvantages([1, Number.NaN], { scale: 'none' })).toThrow(/reward 1 is not a finite/);
    expect(() => groupAdvantages([1, 2], { scale: 'group', eps: -1 })).toThrow(/eps must be/);
  });
});

describe('batchAdvantages', () => {
  it('keeps per-group stats and separates used from no-signal groups', () => {
    const result = batchAdvantages(
      [
        { id: 'a', rewards: [1, 0] },
        { id: 'b', rewards: [0.3, 0.3] },
        { id: 'c', rewards: [0, 0, 3] },
      ],
      { scale: 'none' },
    );
    expect(result.used).toEqual(['a', 'c']);
    expect(result.noSignal).toEqual(['b']);
    // c: mean 1 → [−1, −1, 2]
    expectClose(result.groups[2]?.advantages ?? [], [-1, -1, 2], 1e-12);
    expect(result.groups[2]?.rewards).toEqual([0, 0, 3]);
    expect(result.groups.map((group) => group.id)).toEqual(['a', 'b', 'c']);
  });

  it('names the group whose rewards are bad', () => {
    expect(() => batchAdvantages([{ id: 'g7', rewards: [] }], { scale: 'none' })).toThrow(
      /group g7: .*no rewards/,
    );
  });
});
