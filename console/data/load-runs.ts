// The runs pages' data: the training runs, the chosen ones' steps, and a chart per metric.
import type { Store, TrainingRunListing } from '../../db/store.ts';
import { shortId } from '../format.ts';
import { type ChartAlign, type ChartData, chartData, chartMetricIds, type RunSteps } from './chart-series.ts';

export interface RunsView {
  readonly runs: TrainingRunListing[];
  readonly selected: RunSteps[];
  readonly align: ChartAlign;
  readonly charts: ChartData[];
}

/** How many runs the page overlays when none is chosen: the newest that recorded steps. */
export const defaultOverlay = 3;

export function runLabel(listing: TrainingRunListing): string {
  const produced = listing.versions.length > 0 ? listing.versions.join(', ') : 'no version yet';
  return `${shortId(listing.run.id)} ${listing.baseAdapterName ?? '∅'} → ${produced}`;
}

export async function loadRuns(
  store: Store,
  options: { readonly selected?: readonly string[]; readonly align?: ChartAlign } = {},
): Promise<RunsView> {
  const runs = await store.listTrainingRuns({ limit: 200 });
  const chosen =
    options.selected && options.selected.length > 0
      ? runs.filter((listing) => options.selected?.includes(listing.run.id))
      : runs.filter((listing) => listing.stepCount > 0).slice(0, defaultOverlay);
  return { runs, ...(await chartsFor(store, chosen, options.align ?? autoAlign(chosen))) };
}

/**
 * Runs whose step ranges do not overlap (a resumed run numbered 801–814 beside a fresh one at 0–5)
 * would sit at the two ends of a shared step axis: they are aligned at their first step instead.
 */
export function autoAlign(chosen: readonly TrainingRunListing[]): ChartAlign {
  const ranges = chosen
    .filter((listing) => listing.firstStep !== null && listing.lastStep !== null)
    .map((listing) => [listing.firstStep as number, listing.lastStep as number] as const);
  for (const [index, [low, high]] of ranges.entries()) {
    for (const [otherLow, otherHigh] of ranges.slice(index + 1)) {
      if (high < otherLow || otherHigh < low) return 'first';
    }
  }
  return 'step';
}

export async function chartsFor(
  store: Store,
  chosen: readonly TrainingRunListing[],
  align: ChartAlign,
): Promise<Omit<RunsView, 'runs'>> {
  const steps =
    chosen.length > 0
      ? await store.trainingRunSteps({ trainingRunIds: chosen.map((listing) => listing.run.id) })
      : [];
  const selected = chosen.map((listing) => ({
    id: listing.run.id,
    label: runLabel(listing),
    steps: steps.filter((step) => step.trainingRunId === listing.run.id),
  }));
  return { selected, align, charts: chartMetricIds.map((id) => chartData(selected, id, align)) };
}
