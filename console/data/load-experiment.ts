// An experiment's page data: the same report `edgerl ab report` prints (experiments/load-ab-report.ts
// builds both), for the reward source and task split asked for.
import type { AbRewardSource, AbExperimentView, Store } from '../../db/store.ts';
import { abRewardSources } from '../../db/store.ts';
import type { AbReport } from '../../experiments/ab-report.ts';
import { loadAbReport } from '../../experiments/load-ab-report.ts';
import { type TaskSplit, taskSplits } from '../../protocol/statuses.ts';

export interface ExperimentView {
  readonly view: AbExperimentView;
  readonly report: AbReport;
  readonly reward: AbRewardSource;
  readonly split: TaskSplit | undefined;
}

export function parseReportOptions(query: Record<string, string | undefined>): {
  readonly reward: AbRewardSource;
  readonly split: TaskSplit | undefined;
} {
  return {
    reward: abRewardSources.find((source) => source === query.reward) ?? 'auto',
    split: taskSplits.find((split) => split === query.split),
  };
}

export async function loadExperiment(
  store: Store,
  name: string,
  options: { readonly reward: AbRewardSource; readonly split: TaskSplit | undefined },
): Promise<ExperimentView> {
  const { view, report } = await loadAbReport(store, name, {
    reward: options.reward,
    ...(options.split ? { split: options.split } : {}),
  });
  return { view, report, ...options };
}
