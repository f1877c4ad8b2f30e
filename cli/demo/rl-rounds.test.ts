// The resampling rule of the RL rounds: which groups carry GRPO signal (verifier rewards that differ)
// and how many more groups a round rolls out (the shortfall, within the per-round bound).
import { describe, expect, it } from 'vitest';
import type { GroupView } from './edge-client.ts';
import { resolveDemoConfig } from './demo-config.ts';
import { hasRewardSpread, resampleCount, rlGroupRequest } from './rl-rounds.ts';

const group = (rewards: (number | null)[]): GroupView => ({
  group: { id: 'g', status: 'complete', size: rewards.length },
  progress: { size: rewards.length, ended: rewards.length },
  trajectories: rewards.map((verifierReward) => ({
    status: verifierReward === null ? 'error' : 'finished',
    verifierReward,
    experimentArmId: null,
  })),
});

describe('hasRewardSpread', () => {
  it('is true only when two rewarded episodes differ', () => {
    expect(hasRewardSpread(group([1, 0, 1]))).toBe(true);
    expect(hasRewardSpread(group([0.25, 0.5]))).toBe(true);
    expect(hasRewardSpread(group([1, 1, 1]))).toBe(false);
    expect(hasRewardSpread(group([0, 0]))).toBe(false);
    // Errors have no reward: one rewarded episode has nothing to differ from.
    expect(hasRewardSpread(group([1, null, null]))).toBe(false);
    expect(hasRewardSpread(group([]))).toBe(false);
  });
});

describe('resampleCount', () => {
  it('asks for the shortfall, never beyond the bound, and nothing when off', () => {
    expect(resampleCount(5, 8, 0, 8)).toBe(3);
    expect(resampleCount(5, 8, 6, 8)).toBe(2);
    expect(resampleCount(2, 8, 0, 4)).toBe(4);
    expect(resampleCount(8, 8, 0, 8)).toBe(0);
    expect(resampleCount(9, 8, 0, 8)).toBe(0);
    expect(resampleCount(0, 8, 0, 0)).toBe(0);
  });
});

describe('rlGroupRequest', () => {
  it('samples at --rollout-temperature when set, else at --temperature', () => {
    expect(rlGroupRequest(resolveDemoConfig({}), 7).settings.temperature).toBe(0.7);
    const hotter = resolveDemoConfig({ rolloutTemperature: 1 });
    expect(rlGroupRequest(hotter, 7).settings.temperature).toBe(1);
    // Validation and the A/B read --temperature, which stays as it was.
    expect(hotter.temperature).toBe(0.7);
  });
});
