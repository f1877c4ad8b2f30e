// The one success rule (success.ts), on the cases where the two old rules disagreed: the demo's own
// report counted `reward >= 1` as a success and a missing reward as 0 (a failure), leaving out errors;
// `edgerl ab report` counted `reward === 1` and left missing rewards out, errors included.
import { describe, expect, it } from 'vitest';
import { abArmInput } from '../test/support/ab-arm-input.ts';
import { buildAbReport } from './build-ab-report.ts';
import { countedRewards, countSuccesses, isSuccess, successRateApplies } from './success.ts';

describe('countedRewards', () => {
  it('leaves out errors, even with a reward, and trajectories without a reward', () => {
    const ended = [
      { status: 'finished', reward: 1 },
      { status: 'truncated', reward: 0 },
      { status: 'finished', reward: null }, // old demo: a failure (0); now: not counted
      { status: 'error', reward: 1 }, // old `ab report`: a success; now: not counted
      { status: 'error', reward: null },
      { status: 'truncated', reward: 1 },
    ] as const;
    expect(countedRewards(ended)).toEqual([1, 0, 1]);
  });
});

describe('success', () => {
  it('is a reward of exactly 1, and a rate only over rewards that are all 0 or 1', () => {
    expect([0, 0.99, 1, 1.5, 2].map(isSuccess)).toEqual([false, false, true, false, false]);
    expect(successRateApplies([0, 1, 1])).toBe(true);
    expect(successRateApplies([])).toBe(false);
    // A combined reward above 1 (judge 1·1 + verifier 0.5·1 = 1.5): old demo counted it a success.
    expect(successRateApplies([0, 1, 1.5])).toBe(false);
    expect(countSuccesses([1, 0, 1, 1])).toBe(3);
  });
});

describe('the rule inside the report', () => {
  const arm = (name: string, rewards: number[], error = 0) => abArmInput(name, rewards, { error });
  const experiment = { name: 'e', status: 'running' as const, metric: 'success' as const, minSamples: 2 };

  it('gives no success rate once a reward is above 1 (old demo: 2 of 3 successes)', () => {
    const report = buildAbReport({ experiment, arms: [arm('start', [1.5, 1, 0]), arm('final', [1, 1, 0])] });
    expect(report.binaryRewards).toBe(false);
    expect(report.arms.map((entry) => entry.success)).toEqual([null, null]);
    expect(report.test).toBe('welch-t');
    expect(report.comparisons[0]).toMatchObject({ kind: 'tested', test: 'welch-t' });
  });

  it('counts successes over the counted rewards only (old demo: 1 of 3 with the missing one as 0)', () => {
    // start: finished 1, finished 0, finished without a reward, one error → counted [1, 0].
    const start = countedRewards([
      { status: 'finished', reward: 1 },
      { status: 'finished', reward: 0 },
      { status: 'finished', reward: null },
      { status: 'error', reward: null },
    ]);
    const report = buildAbReport({
      experiment,
      arms: [{ ...arm('start', start, 1), finished: 3 }, arm('final', [1, 1])],
    });
    expect(report.arms[0]?.success).toMatchObject({ successes: 1, n: 2, rate: 0.5 });
    expect(report.arms[0]?.errors).toBe(1);
    expect(report.notes).toContain(
      '2 ended trajectories are left out of the reward statistics (1 ended in error, 1 have no reward).',
    );
  });
});
