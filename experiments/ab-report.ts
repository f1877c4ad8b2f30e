// The A/B report's shapes: what buildAbReport takes (per-arm outcomes, control first) and what it
// returns (arm summaries, comparisons with the control, a verdict). Types only.
import type { ExperimentMetric } from '../db/store-constants.ts';
import type { AbArmOutcomes } from '../db/store.ts';
import type { ExperimentStatus } from '../protocol/statuses.ts';
import type { DifferenceTest, MeanSummary, ProportionSummary } from './statistics.ts';

/** An arm's outcomes as the store gathers them, with the rewards that count instead of every outcome. */
export interface AbArmInput extends Omit<AbArmOutcomes, 'armId' | 'position' | 'ended'> {
  /** The rewards that count (success.ts, countedRewards): finished or truncated, with a reward. */
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
  /** Ended in an infrastructure error (left out of the reward statistics). */
  readonly errors: number;
  /** Counted rewards (success.ts): the count the sample size is about. */
  readonly rewarded: number;
  readonly reward: MeanSummary;
  /** Share of rewards equal to 1, when every reward of the experiment is 0 or 1 (success.ts). */
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
