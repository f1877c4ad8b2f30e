import { describe, expect, it } from 'vitest';
import type { LossSums } from './grpo-loss.ts';
import { stepMetrics } from './step-metrics.ts';

const groups = [
  { rewards: [1, 0, 0, 1], advantages: [0.5, -0.5, -0.5, 0.5], std: 0.5, noSignal: false },
  { rewards: [0.7, 0.7], advantages: [0, 0], std: 0, noSignal: true },
];
const microBatches: LossSums[] = [
  { loss: 0.3, policyLoss: 0.3, tokens: 10, sequences: 2, ratioSum: 10.5, clippedLow: 1, clippedHigh: 2 },
  { loss: -0.1, policyLoss: -0.1, tokens: 30, sequences: 2, ratioSum: 29, clippedLow: 0, clippedHigh: 1 },
];

describe('stepMetrics', () => {
  it('computes the step record from groups and micro-batch sums', () => {
    const metrics = stepMetrics({ groups, microBatches, gradNorm: 2.5, maxGradNorm: 1, learningRate: 5e-6 });
    // rewards [1, 0, 0, 1, 0.7, 0.7]: mean 3.4 / 6 = 0.56666667
    //   squared deviations 2·0.43333² + 2·0.56667² + 2·0.13333² = 0.37556 + 0.64222 + 0.03556 = 1.05333
    //   std = √(1.05333 / 6) = √0.17556 = 0.41899
    expect(metrics['reward/mean']).toBeCloseTo(0.56666667, 6);
    expect(metrics['reward/std']).toBeCloseTo(0.41899, 4);
    expect(metrics['reward/group_std_mean']).toBeCloseTo(0.25, 12); // (0.5 + 0) / 2
    // advantages of the used group only: [0.5, −0.5, −0.5, 0.5]
    expect(metrics['advantage/mean']).toBeCloseTo(0, 12);
    expect(metrics['advantage/abs_mean']).toBeCloseTo(0.5, 12);
    expect(metrics['advantage/std']).toBeCloseTo(0.5, 12);
    expect(metrics['advantage/min']).toBe(-0.5);
    expect(metrics['advantage/max']).toBe(0.5);
    // token-level over 10 + 30 = 40 tokens: ratio (10.5 + 29) / 40 = 0.9875; clip low 1/40, high 3/40
    expect(metrics.tokens).toBe(40);
    expect(metrics['ratio/mean']).toBeCloseTo(0.9875, 12);
    expect(metrics['clip/low_fraction']).toBeCloseTo(0.025, 12);
    expect(metrics['clip/high_fraction']).toBeCloseTo(0.075, 12);
    expect(metrics['clip/fraction']).toBeCloseTo(0.1, 12);
    expect(metrics.loss).toBeCloseTo(0.2, 12); // 0.3 − 0.1
    expect(metrics['grad/norm']).toBe(2.5);
    expect(metrics['grad/clipped']).toBe(1);
    expect(metrics.sequences).toBe(4);
    expect(metrics.micro_batches).toBe(2);
    expect(metrics['groups/total']).toBe(2);
    expect(metrics['groups/used']).toBe(1);
    expect(metrics['groups/no_signal']).toBe(1);
    expect(metrics['kl/mean']).toBeUndefined();
  });

  it('adds KL metrics when every micro-batch measured it', () => {
    const withKl = microBatches.map((batch, i) => ({
      ...batch,
      loss: batch.loss + 0.01 * (i + 1),
      kl: 0.1,
      klSum: 0.4,
    }));
    const metrics = stepMetrics({
      groups,
      microBatches: withKl,
      gradNorm: 0.5,
      maxGradNorm: 1,
      learningRate: 1,
    });
    expect(metrics['kl/mean']).toBeCloseTo(0.02, 12); // (0.4 + 0.4) / 40
    expect(metrics['loss/kl']).toBeCloseTo(0.03, 12); // (0.31 + −0.08) − (0.3 − 0.1)
    expect(metrics['grad/clipped']).toBe(0);
    const mixed = [withKl[0] as LossSums, microBatches[1] as LossSums];
    expect(() =>
      stepMetrics({ groups, microBatches: mixed, gradNorm: 0, maxGradNorm: 1, learningRate: 1 }),
    ).toThrow(/KL sums in 1 of 2 micro-batches/);
  });

  it('reports an empty step with zeros, not NaN', () => {
    const metrics = stepMetrics({
      groups: [],
      microBatches: [],
      gradNorm: 0,
      maxGradNorm: 1,
      learningRate: 1,
    });
    expect(Object.values(metrics).every(Number.isFinite)).toBe(true);
    expect(metrics['groups/used']).toBe(0);
  });
});
