// The console's pages (GET): each loads its data through the Store and renders it server-side.
import type { Context } from 'hono';
import { Hono } from 'hono';
import { csrfOf } from '../auth/console-auth.ts';
import type { ConsoleEnv } from '../console-env.ts';
import type { ChartAlign } from '../data/chart-series.ts';
import { loadCompare } from '../data/load-compare.ts';
import { loadExperiment, parseReportOptions } from '../data/load-experiment.ts';
import { loadGroup } from '../data/load-group.ts';
import { loadGroups } from '../data/load-groups.ts';
import { loadPolicies } from '../data/load-policies.ts';
import { chartsFor, loadRuns } from '../data/load-runs.ts';
import { loadTrajectory } from '../data/load-trajectory.ts';
import { StoreError } from '../../db/errors.ts';
import { taskSplits } from '../../protocol/statuses.ts';
import type { Html } from '../html.ts';
import type { ConsoleLinks } from '../links.ts';
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

export interface PageRouteOptions {
  readonly links: ConsoleLinks;
  readonly signOut: boolean;
  readonly pollMs: number;
  readonly tokenText?: (ids: readonly number[]) => readonly string[];
}

export function pageContext(
  c: Context<ConsoleEnv>,
  options: Pick<PageRouteOptions, 'links' | 'signOut'>,
): PageContext {
  const csrf = csrfOf(c.var.session);
  return { links: options.links, signOut: options.signOut, ...(csrf ? { csrf } : {}) };
}

/** Pages hold store data: never cached, never framed (frame-ancestors in the CSP too). */
export function page(
  c: Context<ConsoleEnv>,
  markup: Html,
  status: 200 | 400 | 401 | 403 | 404 | 409 | 500 = 200,
) {
  c.header('cache-control', 'no-store');
  return c.html(markup.value, status);
}

export function pageRoutes(options: PageRouteOptions) {
  const context = (c: Context<ConsoleEnv>) => pageContext(c, options);
  const tokenText = options.tokenText ? { tokenText: options.tokenText } : {};
  return new Hono<ConsoleEnv>()
    .get('/', async (c) => {
      const asked = c.req.query('align');
      const align = asked === 'first' || asked === 'step' ? (asked satisfies ChartAlign) : undefined;
      const view = await loadRuns(c.var.store, {
        selected: c.req.queries('run') ?? [],
        ...(align ? { align } : {}),
      });
      return page(c, runsPage(context(c), view));
    })
    .get('/runs/:id', async (c) => {
      const [listing] = await c.var.store.listTrainingRuns({ trainingRunIds: [c.req.param('id')] });
      if (!listing) throw new StoreError('not-found', `training run ${c.req.param('id')} does not exist`);
      return page(c, runPage(context(c), listing, await chartsFor(c.var.store, [listing], 'step')));
    })
    .get('/groups', async (c) =>
      page(c, groupsPage(context(c), await loadGroups(c.var.store, c.req.query()))),
    )
    .get('/groups/:id', async (c) =>
      page(
        c,
        groupPage(context(c), await loadGroup(c.var.store, c.req.param('id')), { pollMs: options.pollMs }),
      ),
    )
    .get('/trajectories/:id', async (c) =>
      page(c, trajectoryPage(context(c), await loadTrajectory(c.var.store, c.req.param('id')), tokenText)),
    )
    .get('/policies', async (c) => {
      const view = await loadPolicies(c.var.store);
      // The notice after an action names the policy's default as it is now, read from the store.
      const done = c.req.query('done');
      const lineage = view.lineages.find((entry) => entry.policy.name === c.req.query('policy'));
      const current = lineage?.versions.find((version) => version.id === lineage.policy.defaultVersionId);
      const notice =
        lineage && current && (done === 'promoted' || done === 'rolled-back')
          ? `${lineage.policy.name}: the default version is now ${current.adapterName} (${done === 'promoted' ? 'promoted' : 'rolled back'}).`
          : undefined;
      return page(c, policiesPage(context(c), view, notice));
    })
    .get('/experiments', async (c) =>
      page(c, experimentsPage(context(c), await c.var.store.listAbExperiments())),
    )
    .get('/experiments/:name', async (c) =>
      page(
        c,
        experimentPage(
          context(c),
          await loadExperiment(c.var.store, c.req.param('name'), parseReportOptions(c.req.query())),
        ),
      ),
    )
    .get('/compare', async (c) => {
      const a = c.req.query('a');
      const b = c.req.query('b');
      if (!a || !b) throw new StoreError('validation', 'compare: name two versions, ?a=agent@1&b=agent@2');
      const split = taskSplits.find((candidate) => candidate === c.req.query('split'));
      return page(c, comparePage(context(c), await loadCompare(c.var.store, a, b, split)));
    });
}
