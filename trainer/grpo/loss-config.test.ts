import { describe, expect, it } from 'vitest';
import {
  clipDefaults,
  type LossConfig,
  LossConfigError,
  lossConfigDefaults,
  resolveLossConfig,
} from './loss-config.ts';

function issuesOf(input: Partial<LossConfig>): readonly string[] {
  try {
    resolveLossConfig(input);
  } catch (error) {
    if (error instanceof LossConfigError) return error.issues;
    throw error;
  }
  return [];
}

describe('resolveLossConfig', () => {
  it('fills the documented defaults, with the clip band of the default kind', () => {
    const config = resolveLossConfig();
    expect(config).toEqual({ ...lossConfigDefaults, clip: { low: 1, high: 4 } });
    expect(config.lossKind).toBe('cispo');
    expect(config.aggregation).toBe('token-mean');
    expect(config.beta).toBe(0);
  });

  it('takes the clip band from the chosen kind, and a partial band keeps the rest', () => {
    expect(resolveLossConfig({ lossKind: 'ppo-clip' }).clip).toEqual({ low: 0.2, high: 0.28 });
    expect(
      resolveLossConfig({ lossKind: 'ppo-clip', clip: { high: 0.3 } as LossConfig['clip'] }).clip,
    ).toEqual({
      low: 0.2,
      high: 0.3,
    });
    expect(clipDefaults.cispo).toEqual({ low: 1, high: 4 });
  });

  it('ignores undefined fields (absent flags)', () => {
    expect(resolveLossConfig({ beta: undefined }).beta).toBe(0);
  });

  it('collects every problem with a message that names the field', () => {
    const issues = issuesOf({
      lossKind: 'ppo' as LossConfig['lossKind'],
      clip: { low: 1.2, high: -0.1 },
      beta: -1,
      adamBeta2: 1,
      microBatchTokens: 10.5,
      maxGradNorm: 0,
    });
    expect(issues).toEqual([
      'lossKind must be one of ppo-clip, cispo, got "ppo"',
      'clip.low must be in [0, 1] so the lower ratio bound 1 − low is >= 0, got 1.2',
      'clip.high must be a finite number >= 0, got -0.1',
      'beta must be >= 0, got -1',
      'adamBeta2 must be in [0, 1), got 1',
      'maxGradNorm must be > 0 (Infinity disables clipping), got 0',
      'microBatchTokens must be an integer > 0, got 10.5',
    ]);
  });

  it('checks fields against each other and rejects unknown settings', () => {
    expect(issuesOf({ learningRate: 2, weightDecay: 0.5 })).toEqual([
      "learningRate × weightDecay = 1 >= 1 would flip the weights' sign each step: lower one of them",
    ]);
    expect(issuesOf({ scaleReward: 'group' } as Partial<LossConfig>)).toEqual([
      'unknown setting "scaleReward"',
    ]);
    expect(() => resolveLossConfig({ aggregation: 'sum' as LossConfig['aggregation'] })).toThrow(
      /invalid loss config: aggregation must be one of token-mean, sequence-mean/,
    );
  });
});
