// Every console page in headless Chromium on a seeded store: it loads with no console error, no
// uncaught exception and no failed request; its charts hold as many points as the store has steps,
// on an ascending step axis that zooms; a group of N shows N trajectories; model output stays text.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drawnCharts, launchChromium, watch } from './support/browser.ts';
import { type SeededConsole, sqlValue, startSeededConsole } from './support/seeded-console.ts';

let browser: Browser;
let c: SeededConsole;

beforeAll(async () => {
  [browser, c] = await Promise.all([launchChromium(), startSeededConsole()]);
});
afterAll(async () => {
  await browser?.close();
  await c?.close();
});

/** Opens `path` in a fresh page and returns it with the problems it reported while loading. */
async function open(path: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const watched = watch(page);
  const response = await page.goto(c.url(path), { waitUntil: 'load' });
  expect(response?.status(), path).toBe(200);
  // The scripts are deferred: they have run by the load event goto waited for.
  return { page, problems: watched.problems };
}

async function stepCount(runId: string): Promise<number> {
  return Number(
    await sqlValue(c.store, 'select count(*)::int from training_steps where training_run_id = $1', [runId]),
  );
}

describe('every page', () => {
  it('loads without a console error, an exception or a failed request', async () => {
    const { seed } = c;
    const paths = [
      '',
      `?run=${seed.runs[0]?.id}&run=${seed.runs[1]?.id}&align=first`,
      `/runs/${seed.runs[0]?.id}`,
      `/runs/${seed.runs[1]?.id}`,
      '/groups',
      '/groups?status=scored&q=lisbon&min=0.1',
      `/groups/${seed.groups[0]?.id}`,
      `/groups/${seed.runningGroup.id}`,
      `/trajectories/${seed.hostileTrajectoryId}`,
      '/policies',
      '/experiments',
      `/experiments/${seed.experimentName}`,
      `/experiments/${seed.experimentName}?split=eval&reward=verifier`,
      `/experiments/${seed.experimentName}/promote?arm=agent@2`,
      '/policies/agent/rollback',
      '/compare?a=agent@1&b=agent@2&split=eval',
    ];
    for (const path of paths) {
      const { page, problems } = await open(path);
      expect(problems, path).toEqual([]);
      expect(await page.locator('h1').count(), path).toBe(1);
      await page.close();
    }
  });
});

describe('charts', () => {
  it('plot every step of a run on an ascending step axis (the 801–814 run too)', async () => {
    for (const run of c.seed.runs) {
      const { page, problems } = await open(`/runs/${run.id}`);
      const steps = await stepCount(run.id);
      const charts = await drawnCharts(page);
      // Reward, loss, KL, clip, grad norm, staleness and tokens/s: the seed records all seven.
      expect(charts.map((chart) => chart.id).sort()).toEqual(
        ['clip', 'grad', 'kl', 'loss', 'reward', 'staleness', 'tokens'].sort(),
      );
      for (const chart of charts) {
        expect(chart.x, chart.id).toHaveLength(steps);
        expect(chart.x, chart.id).toEqual([...chart.x].sort((a, b) => a - b));
        expect(new Set(chart.x).size, chart.id).toBe(chart.x.length);
        expect(
          chart.series[0]?.filter((value) => value !== null),
          chart.id,
        ).toHaveLength(steps);
      }
      // The axis spans the steps, not 0…: the first tick label is near the first step.
      const [first] = charts;
      const range = await page.evaluate(() => {
        const chart = (
          globalThis as unknown as {
            edgerlConsole: { charts: { uplot: { scales: { x: { min: number; max: number } } } }[] };
          }
        ).edgerlConsole.charts[0];
        return chart ? { min: chart.uplot.scales.x.min, max: chart.uplot.scales.x.max } : undefined;
      });
      expect(range?.min).toBe(first?.x[0]);
      expect(range?.max).toBe(first?.x.at(-1));
      expect(problems).toEqual([]);
      await page.close();
    }
  });

  it('overlays several runs: one series per run, each with its own steps', async () => {
    const [run1, run2] = c.seed.runs;
    const { page } = await open(`?run=${run1?.id}&run=${run2?.id}`);
    const reward = (await drawnCharts(page)).find((chart) => chart.id === 'reward');
    const counts = reward?.series.map((values) => values.filter((value) => value !== null).length);
    expect(counts?.sort((a, b) => a - b)).toEqual(
      [await stepCount(run1?.id ?? ''), await stepCount(run2?.id ?? '')].sort((a, b) => a - b),
    );
    expect(reward?.x).toEqual([...(reward?.x ?? [])].sort((a, b) => a - b));
    await page.close();
  });

  it('zooms by dragging across a chart, all charts together, and zooms out on double-click', async () => {
    const { page } = await open(`/runs/${c.seed.runs[0]?.id}`);
    const box = await page.locator('[data-chart="loss"] .u-over').boundingBox();
    if (!box) throw new Error('the loss chart has no plot area');
    const scales = () =>
      page.evaluate(() =>
        (
          globalThis as unknown as {
            edgerlConsole: { charts: { uplot: { scales: { x: { min: number; max: number } } } }[] };
          }
        ).edgerlConsole.charts.map((chart) => [chart.uplot.scales.x.min, chart.uplot.scales.x.max]),
      );
    const before = await scales();
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    const zoomed = await scales();
    for (const [index, [min, max]] of zoomed.entries()) {
      expect(min).toBeGreaterThan(before[index]?.[0] as number);
      expect(max).toBeLessThan(before[index]?.[1] as number);
      expect([min, max]).toEqual(zoomed[0]);
    }
    await page.mouse.dblclick(box.x + box.width / 2, box.y + box.height / 2);
    expect(await scales()).toEqual(before);
    await page.close();
  });
});

describe('groups and trajectories', () => {
  it('shows a group of N as N trajectories side by side, with their rewards and the judge', async () => {
    for (const group of [...c.seed.groups.slice(0, 2), { id: c.seed.runningGroup.id }]) {
      const { page } = await open(`/groups/${group.id}`);
      const n = Number(
        await sqlValue(c.store, 'select count(*)::int from trajectories where group_id = $1', [group.id]),
      );
      expect(await page.locator('.trajectory-column[data-trajectory]').count()).toBe(n);
      const finals = await page.locator('.reward-final').allTextContents();
      const stored = await c.store.sql.query(
        'select final_reward from trajectories where group_id = $1 order by started_at, id',
        [group.id],
      );
      expect(finals).toEqual(
        stored.rows.map(([value]) => (value === null ? '–' : (value as number).toFixed(3))),
      );
      await page.close();
    }
    const { page } = await open(`/groups/${c.seed.groups[0]?.id}`);
    expect(await page.locator('.judge').first().textContent()).toMatch(/judge-double/);
    await page.close();
  });

  it('filters groups by text and by status', async () => {
    const { page } = await open('/groups');
    await page.fill('input[name="q"]', 'CHEN');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(/q=CHEN/);
    expect(await page.locator('table.groups tbody tr').allTextContents()).toEqual([
      expect.stringContaining('chen'),
    ]);
    await page.selectOption('select[name="status"]', 'running');
    await page.fill('input[name="q"]', '');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(/status=running/);
    expect(await page.locator('table.groups tbody tr').count()).toBe(1);
    await page.close();
  });

  it('renders markup in model output as text, and shades every sampled token', async () => {
    const { page, problems } = await open(`/trajectories/${c.seed.hostileTrajectoryId}`);
    expect(
      await page.evaluate(() => (globalThis as unknown as { __pwned?: boolean }).__pwned),
    ).toBeUndefined();
    expect(await page.locator('img').count()).toBe(0);
    expect(
      await page.getByText('<script>window.__pwned = true</script>', { exact: false }).count(),
    ).toBeGreaterThan(0);
    const tokens = Number(
      await sqlValue(
        c.store,
        "select coalesce(sum(cardinality(completion_token_ids)), 0)::int from turns where trajectory_id = $1 and role = 'assistant'",
        [c.seed.hostileTrajectoryId],
      ),
    );
    expect(await page.locator('.turn-list .tok').count()).toBe(tokens);
    expect(await page.locator('.badge.error', { hasText: 'malformed-call' }).count()).toBe(1);
    expect(problems).toEqual([]);
    await page.close();
  });
});
