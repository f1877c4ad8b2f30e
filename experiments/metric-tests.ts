// Which test compares two arms for each metric, how it is named and written in the verdict, and when
// the arms cannot be compared yet. A closed table over the tests; the counting of successes is
// success.ts.
import type { ExperimentMetric } from '../db/store-constants.ts';
import type { AbTest } from './ab-report.ts';
import { signed } from './format-numbers.ts';
import { type DifferenceTest, twoProportionTest, welchTTest } from './statistics.ts';
import { countSuccesses } from './success.ts';

export interface MetricTest {
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

export const metricTests = {
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
      twoProportionTest(countSuccesses(control), control.length, countSuccesses(arm), arm.length, confidence),
    untestable: (control, arm) =>
      control.length < 1 || arm.length < 1 ? 'the two-proportion test needs a reward in each arm' : undefined,
  },
} satisfies Record<AbTest, MetricTest>;

/** The test each metric calls for (a success metric over rewards that are not all 0 or 1 falls back to Welch). */
export const testOfMetric = { reward: 'welch-t', success: 'two-proportion-z' } satisfies Record<
  ExperimentMetric,
  AbTest
>;
