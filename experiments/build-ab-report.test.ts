// The A/B report's numbers against SciPy. Reference values were computed with SciPy 1.10.1 and NumPy
// (Debian python3-scipy, /usr/bin/python3), independently of this code:
//   Welch: scipy.stats.ttest_ind(b, a, equal_var=False) for t and p; df = (va + vb)² / (va²/(na − 1) +
//     vb²/(nb − 1)) with v = s²/n; CI = diff ± scipy.stats.t.ppf(0.975, df)·√(va + vb).
//   Arm means: scipy.stats.t.interval(0.95, n − 1, loc=mean, scale=scipy.stats.sem(x)).
//   Two proportions: z = (pb − pa)/√(p̄(1 − p̄)(1/na + 1/nb)), p = 2·scipy.stats.norm.sf(|z|),
//     CI = diff ± norm.ppf(0.975)·√(pa(1 − pa)/na + pb(1 − pb)/nb).
//   Wilson: scipy.stats.binomtest(k, n).proportion_ci(0.95, 'wilson').
//   Holm: the step-down formula written out in Python over the two SciPy p-values.
import { describe, expect, it } from 'vitest';
import { abArmInput } from '../test/support/ab-arm-input.ts';
import type { AbComparison } from './ab-report.ts';
import { buildAbReport } from './build-ab-report.ts';
import { formatAbReport } from './format-ab-report.ts';
import { promoteWarning } from './promote-warning.ts';

const arm = abArmInput;

function tested(comparison: AbComparison | undefined) {
  if (comparison?.kind !== 'tested')
    throw new Error(`expected a tested comparison, got ${JSON.stringify(comparison)}`);
  return comparison;
}

const experiment = { name: 'exp', status: 'running' as const, metric: 'reward' as const, minSamples: 5 };

describe('buildAbReport: mean reward (Welch)', () => {
  const control = [0.42, 0.55, 0.38, 0.61, 0.47, 0.5]; // mean 2.93/6 = 0.48833
  const treatment = [0.66, 0.58, 0.71, 0.52, 0.69, 0.75, 0.6]; // mean 4.51/7 = 0.64429
  const report = buildAbReport({
    experiment,
    arms: [arm('agent@1', control), arm('agent@2', treatment)],
  });

  it('summarises each arm with a t interval', () => {
    const [first, second] = report.arms;
    expect(first?.control).toBe(true);
    expect(first?.reward.mean).toBeCloseTo(0.4883333333333333, 12);
    expect(first?.reward.ci[0]).toBeCloseTo(0.3999270744620047, 8);
    expect(first?.reward.ci[1]).toBeCloseTo(0.5767395922046619, 8);
    expect(second?.reward.ci[0]).toBeCloseTo(0.5693680437047735, 8);
    expect(second?.reward.ci[1]).toBeCloseTo(0.719203384866655, 8);
    expect(report.binaryRewards).toBe(false);
    expect(first?.success).toBeNull();
  });

  it('compares the arms with Welch’s t-test', () => {
    const comparison = tested(report.comparisons[0]);
    expect(comparison.test).toBe('welch-t');
    expect(comparison.difference).toBeCloseTo(0.15595238095238095, 12);
    expect(comparison.statistic).toBeCloseTo(3.386915313556184, 9);
    expect(comparison.df).toBeCloseTo(10.545952954895983, 9);
    expect(comparison.pValue).toBeCloseTo(0.006428749542764038, 9);
    expect(comparison.adjustedPValue).toBe(comparison.pValue); // one comparison: no correction
    expect(comparison.ci[0]).toBeCloseTo(0.05407190025562755, 8);
    expect(comparison.ci[1]).toBeCloseTo(0.2578328616491343, 8);
    expect(comparison.significant).toBe(true);
  });

  it('says which arm won once every arm has the sample size', () => {
    expect(report.enoughData).toBe(true);
    expect(report.verdict).toEqual([
      'agent@2 is better than agent@1: mean reward +0.156 (95% CI +0.054 to +0.258, p = 0.0064).',
      'Promote agent@2: edgerl ab promote exp agent@2',
    ]);
    const text = formatAbReport(report);
    expect(text).toContain('agent@1 (control)');
    expect(text).toContain('0.488 [0.400, 0.577]');
    expect(text).toContain("+0.156 [+0.054, +0.258]  0.0064          yes  Welch's t-test, df 10.5");
  });

  it('says "not enough data yet" until each arm reaches the sample size, with the numbers still shown', () => {
    const early = buildAbReport({
      experiment: { ...experiment, minSamples: 7 },
      arms: [arm('agent@1', control), arm('agent@2', treatment)],
    });
    expect(early.enoughData).toBe(false);
    expect(early.arms.map((entry) => entry.samplesNeeded)).toEqual([1, 0]); // 7 − 6, 7 − 7
    expect(early.verdict[0]).toBe(
      'Not enough data yet: each arm needs 7 rewarded trajectories and agent@1 has 6.',
    );
    expect(early.verdict.join(' ')).not.toMatch(/better|worse|Promote/);
    expect(tested(early.comparisons[0]).pValue).toBeCloseTo(0.006428749542764038, 9);
  });

  it('calls a worse arm worse and a wash a wash', () => {
    const worse = buildAbReport({ experiment, arms: [arm('agent@2', treatment), arm('agent@1', control)] });
    expect(worse.verdict).toEqual([
      'agent@1 is worse than agent@2: mean reward −0.156 (95% CI −0.258 to −0.054, p = 0.0064).',
      'Keep agent@2: no arm did significantly better.',
    ]);
    // Identical samples: difference 0, t = 0, p = 1.
    const same = buildAbReport({ experiment, arms: [arm('a', control), arm('b', [...control])] });
    expect(tested(same.comparisons[0]).pValue).toBeCloseTo(1, 12);
    expect(same.verdict[0]).toMatch(/^No significant difference between b and a: mean reward 0\.000/);
  });
});

describe('buildAbReport: success rate (two proportions)', () => {
  // 12 of 30 vs 21 of 30 successes.
  const ones = (k: number, n: number) => Array.from({ length: n }, (_, index) => (index < k ? 1 : 0));
  const report = buildAbReport({
    experiment: { ...experiment, metric: 'success', minSamples: 30 },
    arms: [arm('agent@1', ones(12, 30)), arm('agent@2', ones(21, 30))],
  });

  it('gives Wilson intervals and a two-proportion z-test', () => {
    expect(report.binaryRewards).toBe(true);
    expect(report.test).toBe('two-proportion-z');
    expect(report.arms[0]?.success?.rate).toBe(0.4);
    expect(report.arms[0]?.success?.ci[0]).toBeCloseTo(0.2459062811680185, 9);
    expect(report.arms[0]?.success?.ci[1]).toBeCloseTo(0.5767963974667751, 9);
    expect(report.arms[1]?.success?.ci[0]).toBeCloseTo(0.5212421254128505, 9);
    expect(report.arms[1]?.success?.ci[1]).toBeCloseTo(0.833352517317562, 9);
    const comparison = tested(report.comparisons[0]);
    expect(comparison.difference).toBeCloseTo(0.3, 12);
    expect(comparison.statistic).toBeCloseTo(2.335496832484568, 9);
    expect(comparison.pValue).toBeCloseTo(0.019517481182177786, 9);
    expect(comparison.ci[0]).toBeCloseTo(0.05995441618223443, 9);
    expect(comparison.ci[1]).toBeCloseTo(0.5400455838177655, 9);
    expect(comparison.df).toBeNull();
    expect(report.verdict[0]).toBe(
      'agent@2 is better than agent@1: success rate +30.0 pp (95% CI +6.0 pp to +54.0 pp, p = 0.0195).',
    );
  });

  it('falls back to Welch with a note when the rewards are not binary', () => {
    const mixed = buildAbReport({
      experiment: { ...experiment, metric: 'success', minSamples: 2 },
      arms: [arm('a', [0, 1, 1]), arm('b', [1, 0.5, 1])],
    });
    expect(mixed.test).toBe('welch-t');
    expect(mixed.binaryRewards).toBe(false);
    expect(mixed.notes[0]).toBe(
      "The metric is success, but not every reward is 0 or 1 (b has 0.5); mean rewards are compared with Welch's t-test instead.",
    );
  });
});

describe('buildAbReport: more than two arms', () => {
  it('compares each arm with the control and Holm-adjusts the p-values', () => {
    const report = buildAbReport({
      experiment,
      arms: [
        arm('c', [0.3, 0.5, 0.4, 0.45, 0.35, 0.5, 0.4]),
        arm('t1', [0.5, 0.6, 0.55, 0.7, 0.45, 0.65]),
        arm('t2', [0.35, 0.45, 0.5, 0.3, 0.55, 0.4, 0.48, 0.42]),
      ],
    });
    expect(report.correction).toBe('holm');
    const [first, second] = report.comparisons.map(tested);
    expect(first?.pValue).toBeCloseTo(0.007403224469131467, 9);
    expect(second?.pValue).toBeCloseTo(0.6811842389499562, 9);
    // Holm, m = 2: 2·0.0074032 = 0.0148064; max(0.0148064, 1·0.68118) = 0.68118
    expect(first?.adjustedPValue).toBeCloseTo(0.014806448938262934, 9);
    expect(second?.adjustedPValue).toBeCloseTo(0.6811842389499562, 9);
    expect(second?.ci[0]).toBeCloseTo(-0.070272238808668, 8);
    expect(report.verdict.at(-1)).toBe('Promote t1: edgerl ab promote exp t1');
    expect(report.notes[0]).toMatch(/Holm-adjusted for 2 comparisons/);
  });
});

describe('buildAbReport: rates and guardrails', () => {
  it('computes error and truncation rates over ended trajectories and flags an arm that errs more', () => {
    // Control: 100 ended, 2 errors; treatment: 100 ended, 15 errors, 5 truncated, 10 still running.
    const rewards = (n: number) => Array.from({ length: n }, (_, index) => (index % 2 === 0 ? 1 : 0));
    const report = buildAbReport({
      experiment: { ...experiment, minSamples: 80 },
      arms: [
        arm('a', rewards(98), { finished: 98, error: 2 }),
        arm('b', rewards(80), { finished: 80, truncated: 5, error: 15, running: 10 }),
      ],
    });
    expect(report.arms[1]?.errorRate).toBeCloseTo(0.15, 15); // 15 / (80 + 5 + 15)
    expect(report.arms[1]?.truncationRate).toBeCloseTo(0.05, 15); // 5 / 100
    expect(report.arms[1]?.observedShare).toBeCloseTo(110 / 210, 15); // (100 ended + 10 running) / 210
    // z-test of 2/100 vs 15/100: p = 0.0009801601736742103 (SciPy, see the header)
    expect(report.notes).toContain(
      'b ends in error more often than a: 15.0% vs 2.0% (p = 0.0010, two-proportion z-test).',
    );
    expect(report.notes).toContain(
      '22 ended trajectories are left out of the reward statistics (17 ended in error, 5 have no reward).', // 2 + 15 errors; 5 truncated without one
    );
  });

  it('leaves a comparison untested when an arm has too few rewards', () => {
    const report = buildAbReport({
      experiment: { ...experiment, minSamples: 2 },
      arms: [arm('a', [1, 0, 1]), arm('b', [1])],
    });
    expect(report.comparisons[0]).toEqual({
      kind: 'untested',
      arm: 'b',
      control: 'a',
      reason: "Welch's t-test needs at least 2 rewards in each arm",
    });
    expect(() => buildAbReport({ experiment, arms: [arm('a', [1])] })).toThrow(/at least two arms/);
  });
});

describe('promoteWarning', () => {
  const control = [0.42, 0.55, 0.38, 0.61, 0.47, 0.5];
  const treatment = [0.66, 0.58, 0.71, 0.52, 0.69, 0.75, 0.6]; // better, p = 0.0064 (above)

  it('backs the significant winner and warns about anything else', () => {
    const report = buildAbReport({ experiment, arms: [arm('a', control), arm('b', treatment)] });
    expect(promoteWarning(report, 'b')).toBeUndefined();
    expect(promoteWarning(report, 'a')).toBe('the report finds b significantly better than a');
  });

  it('warns before the verdict, and when the arm did not win', () => {
    const early = buildAbReport({
      experiment: { ...experiment, minSamples: 50 },
      arms: [arm('a', control), arm('b', treatment)],
    });
    expect(promoteWarning(early, 'b')).toBe('the report has no verdict yet (not enough data)');
    const flipped = buildAbReport({ experiment, arms: [arm('b', treatment), arm('a', control)] });
    expect(promoteWarning(flipped, 'a')).toBe('the report does not find a significantly better than b');
    expect(promoteWarning(flipped, 'b')).toBeUndefined(); // keeping the control that won
  });
});
