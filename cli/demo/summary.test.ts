// The demo's A/B lines, drawn from the experiments report: per arm successes with the Wilson interval,
// then final − start with the two-proportion z-test. Expected numbers computed apart in Python
// (statistics.NormalDist, the Wilson and z formulas written out): Wilson 1/3 = (0.0615, 0.7923),
// 2/3 = (0.2077, 0.9385); z = (2/3 − 1/3)/√(0.5·0.5·(1/3 + 1/3)) = 0.8165, p = 2·Φ(−z) = 0.41422;
// Wald interval 1/3 ± 1.96·√(2·(1/3·2/3)/3) = (−0.4211, 1.0877).
import { describe, expect, it } from 'vitest';
import { buildAbReport } from '../../experiments/build-ab-report.ts';
import { abArmInput } from '../../test/support/ab-arm-input.ts';
import { describeArm, describeComparison } from './summary.ts';

const arm = (name: string, adapterName: string, rewards: number[], error = 0) =>
  abArmInput(name, rewards, { adapterName, error });
const experiment = {
  name: 'demo-eval',
  status: 'running' as const,
  metric: 'success' as const,
  minSamples: 3,
};

describe('the demo summary’s A/B lines', () => {
  it('shows successes with Wilson intervals and the z-test of the difference', () => {
    const report = buildAbReport({
      experiment,
      arms: [arm('start', 'demo@1', [1, 0, 0], 1), arm('final', 'demo@3', [1, 1, 0])],
    });
    const [start, final] = report.arms;
    if (!start || !final) throw new Error('two arms expected');
    expect(describeArm(report, start)).toBe(' 33.3% success (1/3, 95% CI 6.1%–79.2%), 1 error(s)');
    expect(describeArm(report, final)).toBe(' 66.7% success (2/3, 95% CI 20.8%–93.9%)');
    expect(describeComparison(report)).toBe(
      'final − start: +33.3 points (95% CI -42.1 to 108.8), p = 0.4142 (two-proportion z-test)',
    );
  });

  it('writes a p-value below the precision as "p < 0.0001", never "p = < …"', () => {
    // 0/30 against 30/30: z = 1/√(0.5·0.5·(2/30)) = 7.75, p = 2·Φ(−7.75) ≈ 9e-15.
    const zeros = Array.from({ length: 30 }, () => 0);
    const ones = Array.from({ length: 30 }, () => 1);
    const report = buildAbReport({
      experiment: { ...experiment, minSamples: 30 },
      arms: [arm('start', 'demo@1', zeros), arm('final', 'demo@3', ones)],
    });
    const line = describeComparison(report);
    expect(line).toContain('p < 0.0001 (two-proportion z-test)');
    expect(line).not.toMatch(/p = </);
  });

  it('says why there is no comparison when an arm has no reward', () => {
    const report = buildAbReport({
      experiment,
      arms: [arm('start', 'demo@1', [], 3), arm('final', 'demo@3', [1, 1, 0])],
    });
    expect(describeComparison(report)).toBe(
      'final − start: not compared (the two-proportion test needs a reward in each arm)',
    );
  });
});
