// The runs page's charts as plain data: one chart per step metric, one series per run, on a shared
// ascending x (the step, or the step counted from each run's first when runs are aligned). uPlot
// wants every series on one x array, so a run without a step at some x has null there. Pure.
import type { TrainingRunStep } from '../../db/store.ts';

export interface RunSteps {
  readonly id: string;
  /** What the legend says: the run's short id and the version it produced. */
  readonly label: string;
  /** In step order. */
  readonly steps: readonly TrainingRunStep[];
}

export type ChartAlign = 'step' | 'first';

export const chartMetricIds = ['reward', 'loss', 'kl', 'clip', 'grad', 'staleness', 'tokens'] as const;
export type ChartMetricId = (typeof chartMetricIds)[number];

interface ChartMetric {
  readonly title: string;
  readonly value: (step: TrainingRunStep) => number | undefined;
  /** A spread drawn as dashed mean ± spread lines when one run is shown. */
  readonly spread?: (step: TrainingRunStep) => number | undefined;
}

// Keys as trainer/grpo/step-metrics.ts and trainer/train/step-summary.ts write them.
export const chartMetrics = {
  reward: {
    title: 'Reward (mean ± std)',
    value: (step) => step.metrics['reward/mean'],
    spread: (step) => step.metrics['reward/std'],
  },
  loss: { title: 'Loss', value: (step) => step.metrics.loss },
  kl: { title: 'KL to the reference', value: (step) => step.metrics['kl/mean'] },
  clip: { title: 'Clip fraction', value: (step) => step.metrics['clip/fraction'] },
  grad: { title: 'Gradient norm (before clipping)', value: (step) => step.metrics['grad/norm'] },
  staleness: {
    title: 'Staleness (versions behind, mean over groups)',
    value: (step) => step.metrics['staleness/mean'] ?? step.staleness?.mean,
  },
  tokens: { title: 'Tokens per second', value: (step) => step.metrics['tokens/per_second'] },
} satisfies Record<ChartMetricId, ChartMetric>;

export interface ChartSeries {
  readonly label: string;
  readonly values: (number | null)[];
  /** Which run it belongs to (its colour); spread lines share their run's. */
  readonly run: number;
  readonly dash?: boolean;
}

export interface ChartData {
  readonly id: ChartMetricId;
  readonly title: string;
  readonly xLabel: string;
  /** Ascending, no repeats. */
  readonly x: number[];
  readonly series: ChartSeries[];
  /** Points with a value, over all runs' main series: zero means "not recorded". */
  readonly points: number;
}

export function chartData(runs: readonly RunSteps[], id: ChartMetricId, align: ChartAlign): ChartData {
  const metric: ChartMetric = chartMetrics[id];
  const xOf = (run: RunSteps, step: TrainingRunStep) =>
    align === 'first' ? step.step - (run.steps[0]?.step ?? 0) : step.step;
  const x = [...new Set(runs.flatMap((run) => run.steps.map((step) => xOf(run, step))))].sort(
    (a, b) => a - b,
  );
  const position = new Map(x.map((value, index) => [value, index]));
  const column = (run: RunSteps, read: (step: TrainingRunStep) => number | undefined) => {
    const values: (number | null)[] = x.map(() => null);
    for (const step of run.steps) {
      const value = read(step);
      if (value !== undefined && Number.isFinite(value))
        values[position.get(xOf(run, step)) as number] = value;
    }
    return values;
  };
  const series: ChartSeries[] = [];
  let points = 0;
  runs.forEach((run, index) => {
    const values = column(run, metric.value);
    points += values.filter((value) => value !== null).length;
    series.push({ label: run.label, values, run: index });
    const spread = metric.spread;
    if (spread && runs.length === 1) {
      const offset = (sign: number) => (step: TrainingRunStep) => {
        const mean = metric.value(step);
        const width = spread(step);
        return mean === undefined || width === undefined ? undefined : mean + sign * width;
      };
      series.push({ label: `${run.label} + std`, values: column(run, offset(1)), run: index, dash: true });
      series.push({ label: `${run.label} − std`, values: column(run, offset(-1)), run: index, dash: true });
    }
  });
  return {
    id,
    title: metric.title,
    xLabel: align === 'first' ? 'steps since the run began' : 'training step',
    x,
    series,
    points,
  };
}
