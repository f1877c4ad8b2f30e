// Gathers an experiment's per-arm outcomes through the store and builds its A/B report: the I/O half of
// `edgerl ab report`, `edgerl ab promote` and the demo (the statistics are in build-ab-report.ts, which
// rewards count in success.ts).
import type { TaskSplit } from '../protocol/statuses.ts';
import type { AbExperimentView, AbRewardSource, Store } from '../db/store.ts';
import type { AbReport } from './ab-report.ts';
import { buildAbReport } from './build-ab-report.ts';
import { countedRewards } from './success.ts';

export interface LoadAbReportOptions {
  readonly reward?: AbRewardSource;
  /** Only trajectories of tasks in this split (eval runs); all when absent. */
  readonly split?: TaskSplit;
}

export interface LoadedAbReport {
  readonly view: AbExperimentView;
  readonly report: AbReport;
}

export async function loadAbReport(
  store: Pick<Store, 'getAbExperiment' | 'abArmOutcomes'>,
  experimentRef: string,
  options: LoadAbReportOptions = {},
): Promise<LoadedAbReport> {
  const view = await store.getAbExperiment(experimentRef);
  const outcomes = await store.abArmOutcomes({
    experimentId: view.experiment.id,
    reward: options.reward ?? 'auto',
    ...(options.split ? { split: options.split } : {}),
  });
  const { name, status, metric, minSamples } = view.experiment;
  const arms = outcomes.map(({ ended, ...arm }) => ({ ...arm, rewards: countedRewards(ended) }));
  return { view, report: buildAbReport({ experiment: { name, status, metric, minSamples }, arms }) };
}
