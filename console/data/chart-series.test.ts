// Chart data: x ascending without repeats, one value per recorded step, runs aligned on request,
// and the reward spread drawn for a single run only. Expected arrays are worked out by hand.
import { describe, expect, it } from 'vitest';
import type { TrainingRunStep } from '../../db/store.ts';
import { chartData, type RunSteps } from './chart-series.ts';

function step(runId: string, number: number, metrics: Record<string, number>): TrainingRunStep {
  return { trainingRunId: runId, step: number, metrics, groupCount: 1, staleness: null, recordedAt: 0 };
}

const late: RunSteps = {
  id: 'a',
  label: 'a',
  steps: [801, 802, 803].map((n, i) => step('a', n, { 'reward/mean': 0.1 * (i + 1), 'reward/std': 0.05 })),
};
const early: RunSteps = {
  id: 'b',
  label: 'b',
  steps: [0, 2].map((n) => step('b', n, { 'reward/mean': 0.5, loss: 1 })),
};

describe('chartData', () => {
  it('puts one run on its own steps, with mean ± std for the reward', () => {
    const chart = chartData([late], 'reward', 'step');
    expect(chart.x).toEqual([801, 802, 803]);
    expect(chart.points).toBe(3);
    expect(chart.series.map((series) => series.label)).toEqual(['a', 'a + std', 'a − std']);
    expect(chart.series[0]?.values).toEqual([0.1, 0.2, 0.1 * 3]);
    // 0.1 + 0.05, 0.2 + 0.05, 0.3 + 0.05 (within float rounding).
    chart.series[1]?.values.forEach((value, index) => {
      expect(Math.abs((value as number) - (0.1 * (index + 1) + 0.05))).toBeLessThan(1e-12);
    });
  });

  it('overlays runs on the union of their steps, null where a run has none', () => {
    const chart = chartData([late, early], 'reward', 'step');
    expect(chart.x).toEqual([0, 2, 801, 802, 803]);
    expect(chart.series.map((series) => series.values)).toEqual([
      [null, null, 0.1, 0.2, 0.1 * 3],
      [0.5, 0.5, null, null, null],
    ]);
    expect(chart.points).toBe(5);
  });

  it('aligns runs at their first step when asked', () => {
    const chart = chartData([late, early], 'reward', 'first');
    expect(chart.x).toEqual([0, 1, 2]);
    expect(chart.series.map((series) => series.values)).toEqual([
      [0.1, 0.2, 0.1 * 3],
      [0.5, null, 0.5],
    ]);
  });

  it('counts no point for a metric a run did not record', () => {
    const chart = chartData([late, early], 'loss', 'step');
    expect(chart.points).toBe(2);
    expect(chartData([late], 'kl', 'step').points).toBe(0);
  });

  it('reads staleness from the store when the step metrics have none', () => {
    const run: RunSteps = {
      id: 'c',
      label: 'c',
      steps: [{ ...step('c', 5, {}), staleness: { mean: 1.5, max: 2 } }],
    };
    expect(chartData([run], 'staleness', 'step').series[0]?.values).toEqual([1.5]);
  });
});
