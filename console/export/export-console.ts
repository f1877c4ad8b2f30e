// The console as static files: the same pages rendered with file links (console/links.ts,
// exportLinks), the charts' data inline, the scripts and styles beside them, so the folder opens
// from disk with no server and no network (the demo writes one). Without a server there are no
// filters, live updates or actions. Writes through `write`, so it runs wherever files can be written.
import type { Store } from '../../db/store.ts';
import { embeddedAssets } from '../assets/embedded-assets.ts';
import { loadCompare } from '../data/load-compare.ts';
import { loadExperiment } from '../data/load-experiment.ts';
import { loadGroup } from '../data/load-group.ts';
import { loadPolicies } from '../data/load-policies.ts';
import { chartsFor, loadRuns } from '../data/load-runs.ts';
import { loadTrajectory } from '../data/load-trajectory.ts';
import { groupsPageSize } from '../data/load-groups.ts';
import type { Html } from '../html.ts';
import { type ConsoleAsset, exportLinks } from '../links.ts';
import { comparePage } from '../pages/compare-page.ts';
import { experimentPage } from '../pages/experiment-page.ts';
import { experimentsPage } from '../pages/experiments-page.ts';
import { groupPage } from '../pages/group-page.ts';
import { groupsPage } from '../pages/groups-page.ts';
import type { PageContext } from '../pages/layout.ts';
import { policiesPage } from '../pages/policies-page.ts';
import { runPage } from '../pages/run-page.ts';
import { runsPage } from '../pages/runs-page.ts';
import { trajectoryPage } from '../pages/trajectory-page.ts';

export interface ExportOptions {
  /** Writes one file of the export; `name` is relative (`index.html`, `assets/uplot.js`). */
  readonly write: (name: string, body: string) => Promise<void>;
  readonly tokenText?: (ids: readonly number[]) => readonly string[];
  /** The newest groups exported, each with its trajectories (default 200). */
  readonly maxGroups?: number;
}

export interface ExportResult {
  readonly files: number;
  readonly runs: number;
  readonly groups: number;
  readonly trajectories: number;
  readonly experiments: number;
}

export async function exportConsole(store: Store, options: ExportOptions): Promise<ExportResult> {
  const context: PageContext = { links: exportLinks };
  const tokenText = options.tokenText ? { tokenText: options.tokenText } : {};
  let files = 0;
  const write = async (name: string, markup: Html | string) => {
    await options.write(name, typeof markup === 'string' ? markup : markup.value);
    files += 1;
  };
  for (const [name, asset] of Object.entries(embeddedAssets)) {
    await write(exportLinks.asset(name as ConsoleAsset), asset.body);
  }

  const runs = await loadRuns(store);
  await write(exportLinks.runs(), runsPage(context, runs));
  for (const listing of runs.runs) {
    await write(
      exportLinks.run(listing.run.id),
      runPage(context, listing, await chartsFor(store, [listing], 'step')),
    );
  }

  const maxGroups = options.maxGroups ?? 200;
  const listings = await store.searchGroups({ limit: Math.min(500, maxGroups) });
  const [filterOptions] = await Promise.all([store.groupFilterOptions()]);
  await write(
    exportLinks.groups(),
    groupsPage(context, {
      filter: {},
      problems: [],
      listings,
      options: filterOptions,
      pageSize: Math.max(groupsPageSize, listings.length),
    }),
  );
  const trajectoryIds = new Set<string>();
  for (const listing of listings) {
    const view = await loadGroup(store, listing.group.id);
    for (const trajectory of view.trajectories) trajectoryIds.add(trajectory.id);
    await write(exportLinks.group(listing.group.id), groupPage(context, view, { pollMs: 0 }));
  }

  await write(exportLinks.policies(), policiesPage(context, await loadPolicies(store)));
  const experiments = await store.listAbExperiments();
  await write(exportLinks.experiments(), experimentsPage(context, experiments));
  for (const { experiment } of experiments) {
    const data = await loadExperiment(store, experiment.name, { reward: 'auto', split: undefined });
    await write(exportLinks.experiment(experiment.name), experimentPage(context, data));
    const control = data.view.arms[0];
    for (const arm of data.view.arms.slice(1)) {
      if (!control) break;
      // Two arms on one version (a demo round that published nothing) have nothing to compare.
      if (arm.policyVersionId === control.policyVersionId) continue;
      const compare = await loadCompare(store, control.adapterName, arm.adapterName, undefined);
      for (const row of compare.rows)
        for (const answer of row.answers) trajectoryIds.add(answer.trajectoryId);
      await write(exportLinks.compare(control.adapterName, arm.adapterName), comparePage(context, compare));
    }
  }

  for (const id of trajectoryIds) {
    await write(
      exportLinks.trajectory(id),
      trajectoryPage(context, await loadTrajectory(store, id), tokenText),
    );
  }
  return {
    files,
    runs: runs.runs.length,
    groups: listings.length,
    trajectories: trajectoryIds.size,
    experiments: experiments.length,
  };
}
