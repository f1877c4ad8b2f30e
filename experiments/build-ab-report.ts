// The A/B report as data: per-arm outcome rates and reward summaries, every arm compared with the
// control (the first arm) by the test that fits the metric, and a verdict in plain words that waits
// for the sample size chosen when the experiment was created. Pure: numbers in, report out; the
// `edgerl ab report` command gathers the numbers from the store and prints them.
//
// Tests: Welch's t-test for mean rewards (Welch 1947), the two-proportion z-test for success rates;
// with more than two arms the p-values are Holm-adjusted (Holm 1979) for the comparisons with the
// control, the confidence intervals are not. Waiting for a fixed sample size before any verdict is
// what keeps repeated looks at the report from inflating false positives (the "peeking" problem of
// fixed-horizon tests).
import type { ExperimentStatus } from '../protocol/statuses.ts';
import type { ExperimentMetric } from '../db/schema/experiments.ts';
import { holmAdjust } from './holm-adjust.ts';
import {
  type DifferenceTest,
  type MeanSummary,
  type ProportionSummary,
  summarizeMean,
  summarizeProportion,
  twoProportionTest,
  welchTTest,
} from './statistics.ts';

export interface AbArmInput {
  readonly name: string;
  readonly adapterName: string;
  /** Share of traffic the arm is meant to get (0–1). */
  readonly weight: number;
  readonly running: number;
  readonly finished: number;
  readonly truncated: number;
  readonly error: number;
  readonly turnCountMean: number | null;
  readonly latencyMsMean: number | null;
  /** Rewards of the arm's ended trajectories that have one. */
  readonly rewards: readonly number[];
}

export interface AbReportInput {
  readonly experiment: {
    readonly name: string;
    readonly status: ExperimentStatus;
    readonly metric: ExperimentMetric;
    readonly minSamples: number;
  };
  /** Control first. */
  readonly arms: readonly AbArmInput[];
  /** Default 0.95; α = 1 − confidence. */
  readonly confidence?: number;
}

export type AbTest = DifferenceTest['test'];

export interface AbArmReport {
  readonly name: string;
  readonly adapterName: string;
  readonly control: boolean;
  readonly weight: number;
  /** The arm's share of all the experiment's trajectories (running included); null with none. */
  readonly observedShare: number | null;
  readonly running: number;
  /** Finished, truncated or error. */
  readonly ended: number;
  /** Ended with a reward: the count the sample size is about. */
  readonly rewarded: number;
  readonly reward: MeanSummary;
  /** Share of rewards equal to 1, when every reward of the experiment is 0 or 1. */
  readonly success: ProportionSummary | null;
  /** Over ended trajectories; null when none has ended. */
  readonly errorRate: number | null;
  readonly truncationRate: number | null;
  readonly turnCountMean: number | null;
  readonly latencyMsMean: number | null;
  /** Rewarded trajectories still missing before the verdict (0 once reached). */
  readonly samplesNeeded: number;
}

export type AbComparison =
  | {
      readonly kind: 'tested';
      readonly arm: string;
      readonly control: string;
      readonly test: AbTest;
      /** Arm minus control: mean reward, or success rate. */
      readonly difference: number;
      readonly ci: [number, number];
      readonly statistic: number;
      /** Welch–Satterthwaite degrees of freedom; null for the z-test. */
      readonly df: number | null;
      readonly pValue: number;
      /** Holm-adjusted with more than one comparison, else equal to pValue. */
      readonly adjustedPValue: number;
      readonly significant: boolean;
    }
  | { readonly kind: 'untested'; readonly arm: string; readonly control: string; readonly reason: string };

export interface AbReport {
  readonly experiment: AbReportInput['experiment'];
  readonly confidence: number;
  /** Every reward of the experiment is 0 or 1 (and there is at least one). */
  readonly binaryRewards: boolean;
  readonly test: AbTest;
  readonly correction: 'none' | 'holm';
  readonly enoughData: boolean;
  readonly arms: AbArmReport[];
  readonly comparisons: AbComparison[];
  /** Plain words, one sentence per line. */
  readonly verdict: string[];
  readonly notes: string[];
}

interface MetricRule {
  readonly test: AbTest;
  /** How the difference is named and written in the verdict. */
  readonly label: string;
  readonly formatDifference: (value: number) => string;
  readonly compare: (
    control: readonly number[],
    arm: readonly number[],
    confidence: number,
  ) => DifferenceTest;
  /** Why the arms cannot be compared yet, or undefined when they can. */
  readonly untestable: (control: readonly number[], arm: readonly number[]) => string | undefined;
}

const successes = (rewards: readonly number[]) => rewards.filter((reward) => reward === 1).length;

const rules = {
  'welch-t': {
    test: 'welch-t',
    label: 'mean reward',
    formatDifference: (value) => signed(value, 3),
    compare: (control, arm, confidence) => welchTTest(control, arm, confidence),
    untestable: (control, arm) =>
      control.length < 2 || arm.length < 2
        ? "Welch's t-test needs at least 2 rewards in each arm"
        : undefined,
  },
  'two-proportion-z': {
    test: 'two-proportion-z',
    label: 'success rate',
    formatDifference: (value) => `${signed(value * 100, 1)} pp`,
    compare: (control, arm, confidence) =>
      twoProportionTest(successes(control), control.length, successes(arm), arm.length, confidence),
    untestable: (control, arm) =>
      control.length < 1 || arm.length < 1 ? 'the two-proportion test needs a reward in each arm' : undefined,
  },
} satisfies Record<AbTest, MetricRule>;

/** The test each metric calls for. */
const testOfMetric = { reward: 'welch-t', success: 'two-proportion-z' } satisfies Record<
  ExperimentMetric,
  AbTest
>;

export function buildAbReport(input: AbReportInput): AbReport {
  const confidence = input.confidence ?? 0.95;
  const alpha = 1 - confidence;
  const { experiment } = input;
  if (input.arms.length < 2)
    throw new RangeError(`an A/B report needs at least two arms, got ${input.arms.length}`);
  const allRewards = input.arms.flatMap((arm) => arm.rewards);
  const binaryRewards = allRewards.length > 0 && allRewards.every((reward) => reward === 0 || reward === 1);
  const notes: string[] = [];

  let test: AbTest = testOfMetric[experiment.metric];
  if (test === 'two-proportion-z' && allRewards.length > 0 && !binaryRewards) {
    const odd = input.arms.find((arm) => arm.rewards.some((reward) => reward !== 0 && reward !== 1));
    const value = odd?.rewards.find((reward) => reward !== 0 && reward !== 1);
    notes.push(
      `The metric is success, but not every reward is 0 or 1 (${odd?.name} has ${value}); mean rewards are compared with Welch's t-test instead.`,
    );
    test = 'welch-t';
  }
  const rule: MetricRule = rules[test];

  const total = input.arms.reduce((sum, arm) => sum + arm.running + ended(arm), 0);
  const arms = input.arms.map((arm, index): AbArmReport => {
    const endedCount = ended(arm);
    return {
      name: arm.name,
      adapterName: arm.adapterName,
      control: index === 0,
      weight: arm.weight,
      observedShare: total > 0 ? (arm.running + endedCount) / total : null,
      running: arm.running,
      ended: endedCount,
      rewarded: arm.rewards.length,
      reward: summarizeMean(arm.rewards, confidence),
      success: binaryRewards
        ? summarizeProportion(successes(arm.rewards), arm.rewards.length, confidence)
        : null,
      errorRate: endedCount > 0 ? arm.error / endedCount : null,
      truncationRate: endedCount > 0 ? arm.truncated / endedCount : null,
      turnCountMean: arm.turnCountMean,
      latencyMsMean: arm.latencyMsMean,
      samplesNeeded: Math.max(0, experiment.minSamples - arm.rewards.length),
    };
  });

  const [control, ...treatments] = input.arms as [AbArmInput, ...AbArmInput[]];
  type Outcome = { arm: AbArmInput; result: DifferenceTest } | { arm: AbArmInput; reason: string };
  const tested = treatments.map((arm): Outcome => {
    const reason = rule.untestable(control.rewards, arm.rewards);
    return reason === undefined
      ? { arm, result: rule.compare(control.rewards, arm.rewards, confidence) }
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
    ? decide(experiment.name, control.name, comparisons, rule, confidence)
    : waiting(experiment, arms);
  if (enoughData) notes.push(...errorGuardrails(input.arms, alpha));
  const unrewarded = input.arms.reduce((sum, arm) => sum + ended(arm) - arm.rewards.length, 0);
  if (unrewarded > 0) {
    notes.push(`${unrewarded} ended trajectories have no reward and are left out of the reward statistics.`);
  }
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

function ended(arm: AbArmInput): number {
  return arm.finished + arm.truncated + arm.error;
}

function waiting(experiment: AbReportInput['experiment'], arms: readonly AbArmReport[]): string[] {
  const short = arms
    .filter((arm) => arm.samplesNeeded > 0)
    .map((arm) => `${arm.name} has ${arm.rewarded}`)
    .join(', ');
  const lines = [
    `Not enough data yet: each arm needs ${experiment.minSamples} rewarded trajectories and ${short}.`,
  ];
  lines.push(
    experiment.status === 'running'
      ? 'Keep the experiment running; the verdict appears once every arm has reached the sample size.'
      : 'The experiment is stopped; run a new one to collect more data.',
  );
  return lines;
}

function decide(
  experimentName: string,
  controlName: string,
  comparisons: readonly AbComparison[],
  rule: MetricRule,
  confidence: number,
): string[] {
  const level = `${formatNumber(confidence * 100, 0)}%`;
  const lines = comparisons.map((comparison) => {
    if (comparison.kind === 'untested') {
      return `${comparison.arm} cannot be compared with ${controlName} yet: ${comparison.reason}.`;
    }
    const numbers = `${rule.label} ${rule.formatDifference(comparison.difference)} (${level} CI ${rule.formatDifference(
      comparison.ci[0],
    )} to ${rule.formatDifference(comparison.ci[1])}, p ${formatP(comparison.adjustedPValue)})`;
    if (!comparison.significant) {
      return `No significant difference between ${comparison.arm} and ${controlName}: ${numbers}.`;
    }
    return comparison.difference > 0
      ? `${comparison.arm} is better than ${controlName}: ${numbers}.`
      : `${comparison.arm} is worse than ${controlName}: ${numbers}.`;
  });
  const winners = comparisons
    .filter(
      (comparison) => comparison.kind === 'tested' && comparison.significant && comparison.difference > 0,
    )
    .sort((a, b) => (b.kind === 'tested' ? b.difference : 0) - (a.kind === 'tested' ? a.difference : 0));
  const best = winners[0];
  if (best) {
    lines.push(`Promote ${best.arm}: edgerl ab promote ${experimentName} ${best.arm}`);
  } else {
    lines.push(`Keep ${controlName}: no arm did significantly better.`);
  }
  return lines;
}

/** A guardrail users of experimentation platforms expect: an arm that errs more often is called out. */
function errorGuardrails(arms: readonly AbArmInput[], alpha: number): string[] {
  const [control, ...treatments] = arms as [AbArmInput, ...AbArmInput[]];
  const controlEnded = ended(control);
  return treatments.flatMap((arm) => {
    const armEnded = ended(arm);
    if (controlEnded === 0 || armEnded === 0) return [];
    const result = twoProportionTest(control.error, controlEnded, arm.error, armEnded);
    if (!(result.difference > 0 && result.pValue < alpha)) return [];
    return [
      `${arm.name} ends in error more often than ${control.name}: ${formatNumber((arm.error / armEnded) * 100, 1)}% vs ${formatNumber(
        (control.error / controlEnded) * 100,
        1,
      )}% (p ${formatP(result.pValue)}, two-proportion z-test).`,
    ];
  });
}

function formatNumber(value: number, digits: number): string {
  return value.toFixed(digits);
}

function signed(value: number, digits: number): string {
  const text = Math.abs(value).toFixed(digits);
  if (Number(text) === 0) return text;
  return `${value < 0 ? '−' : '+'}${text}`;
}

/** `= 0.0123`, or `< 0.0001` below the precision a report should claim. */
export function formatP(p: number): string {
  if (Number.isNaN(p)) return '= n/a';
  return p < 0.0001 ? '< 0.0001' : `= ${p.toFixed(4)}`;
}
