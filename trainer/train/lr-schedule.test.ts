// The schedule's factor against values worked out by hand, and the config slice's checks.
import { describe, expect, it } from 'vitest';
import { learningRateFactor, scheduledLearningRate } from './lr-schedule.ts';
import { lrScheduleSettingsSchema } from './lr-schedule-settings.ts';
import { maxAbsDiff } from '../../test/support/max-difference.ts';

const settings = (input: Record<string, unknown>) => lrScheduleSettingsSchema.parse(input);

describe('learningRateFactor', () => {
  it('is 1 at every step by default (constant, no warm-up)', () => {
    const constant = settings({});
    expect([1, 2, 100].map((step) => learningRateFactor(step, constant))).toEqual([1, 1, 1]);
  });

  it('warms up linearly from 1/K, then holds', () => {
    const warm = settings({ warmupSteps: 4 });
    expect([1, 2, 3, 4, 5, 50].map((step) => learningRateFactor(step, warm))).toEqual([
      0.25, 0.5, 0.75, 1, 1, 1,
    ]);
    expect(scheduledLearningRate(1e-3, 2, warm)).toBeCloseTo(5e-4, 15);
  });

  it('decays on a half cosine after the warm-up, 0 past the last step', () => {
    const cosine = settings({ kind: 'cosine', warmupSteps: 2, decaySteps: 6 });
    // Steps 3..6 are progress 0, 1/4, 2/4, 3/4 of the decay: ½(1 + cos πp).
    const expected = [0.5, 1, 1, (1 + Math.SQRT1_2) / 2, 0.5, (1 - Math.SQRT1_2) / 2, 0, 0];
    const got = [1, 2, 3, 4, 5, 6, 7, 20].map((step) => learningRateFactor(step, cosine));
    expect(maxAbsDiff(got, expected)).toBeLessThan(1e-12);
  });

  it('refuses a step below 1', () => {
    expect(() => learningRateFactor(0, settings({}))).toThrow(RangeError);
  });
});

describe('lrScheduleSettingsSchema', () => {
  it('needs a decay length beyond the warm-up for cosine', () => {
    expect(lrScheduleSettingsSchema.safeParse({ kind: 'cosine' }).error?.issues[0]?.message).toMatch(
      /needs --lr-decay-steps/,
    );
    expect(
      lrScheduleSettingsSchema.safeParse({ kind: 'cosine', warmupSteps: 4, decaySteps: 4 }).error?.issues[0]
        ?.message,
    ).toMatch(/must exceed --lr-warmup-steps \(4\)/);
    expect(lrScheduleSettingsSchema.safeParse({ kind: 'cosine', decaySteps: 10 }).success).toBe(true);
  });
});
