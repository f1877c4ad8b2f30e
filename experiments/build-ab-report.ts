// The A/B report as data: per-arm outcome rates and reward summaries, every arm compared with the
// control (the first arm) by the test that fits the metric, and a verdict in plain words that waits
// for the sample size chosen when the experiment was created. Pure: numbers in, report out; the
// store's numbers are gathered by load-ab-report.ts, the text is format-ab-report.ts.
//
// Tests: Welch's t-test for mean rewards (Welch 1947), the two-proportion z-test for success rates;
// with more than two arms the p-values are Holm-adjusted (Holm 1979) for the comparisons with the
// control, the confidence intervals are not. Waiting for a fixed sample size before any verdict is
// what keeps repeated looks at the report from inflating false positives (the "peeking" problem of
// fixed-horizon tests).
import type { AbArmInput, AbArmReport, AbComparison, AbReport, AbReportInput, AbTest } from './ab-report.ts';
import { abVerdict, waitingVerdict } from './ab-verdict.ts';
import { endedCount, errorGuardrails } from './error-guardrails.ts';
import { holmAdjust } from './holm-adjust.ts';
import { type MetricTest, metricTests, testOfMetric } from './metric-tests.ts';
import { type DifferenceTest, summarizeMean, summarizeProportion } from './statistics.ts';
import { countSuccesses, successRateApplies } from './success.ts';

export function buildAbReport(input: AbReportInput): AbReport {
  const confidence = input.confidence ?? 0.95;
  const alpha = 1 - confidence;
  const { experiment } = input;
  if (input.arms.length < 2)
    throw new RangeError(`an A/B report needs at least two arms, got ${input.arms.length}`);
  const allRewards = input.arms.flatMap((arm) => arm.rewards);
  const binaryRewards = successRateApplies(allRewards);
  const notes: string[] = [];

  let test: AbTest = testOfMetric[experiment.metric];
  if (test === 'two-proportion-z' && allRewards.length > 0 && !binaryRewards) {
    const odd = input.arms.find((arm) => !successRateApplies(arm.rewards) && arm.rewards.length > 0);
    const value = odd?.rewards.find((reward) => reward !== 0 && reward !== 1);
    notes.push(
      `The metric is success, but not every reward is 0 or 1 (${odd?.name} has ${value}); mean rewards are compared with Welch's t-test instead.`,
    );
    test = 'welch-t';
  }
  const metricTest: MetricTest = metricTests[test];

  const total = input.arms.reduce((sum, arm) => sum + arm.running + endedCount(arm), 0);
  const arms = input.arms.map((arm, index): AbArmReport => {
    const ended = endedCount(arm);
    return {
      name: arm.name,
      adapterName: arm.adapterName,
      control: index === 0,
      weight: arm.weight,
      observedShare: total > 0 ? (arm.running + ended) / total : null,
      running: arm.running,
      ended,
      errors: arm.error,
      rewarded: arm.rewards.length,
      reward: summarizeMean(arm.rewards, confidence),
      success: binaryRewards
        ? summarizeProportion(countSuccesses(arm.rewards), arm.rewards.length, confidence)
        : null,
      errorRate: ended > 0 ? arm.error / ended : null,
      truncationRate: ended > 0 ? arm.truncated / ended : null,
      turnCountMean: arm.turnCountMean,
      latencyMsMean: arm.latencyMsMean,
      samplesNeeded: Math.max(0, experiment.minSamples - arm.rewards.length),
    };
  });

  const [control, ...treatments] = input.arms as [AbArmInput, ...AbArmInput[]];
  type Outcome = { arm: AbArmInput; result: DifferenceTest } | { arm: AbArmInput; reason: string };
  const tested = treatments.map((arm): Outcome => {
    const reason = metricTest.untestable(control.rewards, arm.rewards);
    return reason === undefined
      ? { arm, result: metricTest.compare(control.rewards, arm.rewards, confidence) }
      : { arm, reason };
  });
  const correction = treatments.length > 1 ? 'holm' : 'none';
  const adjusted = holmAdjust(tested.map((entry) => ('result' in entry ? entry.result.pValue : Number.NaN)));
  const comparisons = tested.map((entry, index): AbComparison => {
    if ('reason' in entry) {
      return { kind: 'untested', arm: entry.arm.name, control: control.name, reason: entry.reason };
    }
    const adjustedPValue = correction === 'holm' ? (adjusted[index] ?? Number.NaN) : entry.result.pValue;
    return {
      kind: 'tested',
      arm: entry.arm.name,
      control: control.name,
      test: entry.result.test,
      difference: entry.result.difference,
      ci: entry.result.ci,
      statistic: entry.result.statistic,
      df: Number.isFinite(entry.result.df) ? entry.result.df : null,
      pValue: entry.result.pValue,
      adjustedPValue,
      significant: adjustedPValue < alpha,
    };
  });
  if (correction === 'holm') {
    notes.push(
      `p-values are Holm-adjusted for ${treatments.length} comparisons with the control; the confidence intervals are not adjusted.`,
    );
  }

  const enoughData = arms.every((arm) => arm.samplesNeeded === 0);
  const verdict = enoughData
    ? abVerdict(experiment.name, control.name, comparisons, metricTest, confidence)
    : waitingVerdict(experiment, arms);
  if (enoughData) notes.push(...errorGuardrails(input.arms, alpha));
  const leftOut = leftOutNote(input.arms);
  if (leftOut) notes.push(leftOut);
  return {
    experiment,
    confidence,
    binaryRewards,
    test,
    correction,
    enoughData,
    arms,
    comparisons,
    verdict,
    notes,
  };
}

/** What the reward statistics leave out (success.ts): errors, and trajectories without a reward. */
function leftOutNote(arms: readonly AbArmInput[]): string | undefined {
  const errors = arms.reduce((sum, arm) => sum + arm.error, 0);
  const unrewarded = arms.reduce((sum, arm) => sum + arm.finished + arm.truncated - arm.rewards.length, 0);
  if (errors + unrewarded === 0) return undefined;
  const parts = [
    errors > 0 ? `${errors} ended in error` : undefined,
    unrewarded > 0 ? `${unrewarded} have no reward` : undefined,
  ].filter(Boolean);
  return `${errors + unrewarded} ended trajectories are left out of the reward statistics (${parts.join(', ')}).`;
}
