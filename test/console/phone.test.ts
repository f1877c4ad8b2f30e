// The pages at phone width (390 × 844 CSS pixels, an iPhone 12–15's viewport): nothing makes the
// page itself scroll sideways (wide tables scroll inside their own box), a group's trajectories stack
// one under another, and the charts fit the screen.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { drawnCharts, launchChromium, watch } from './support/browser.ts';
import { type SeededConsole, startSeededConsole } from './support/seeded-console.ts';

const phone = { width: 390, height: 844 };
let browser: Browser;
let c: SeededConsole;

beforeAll(async () => {
  [browser, c] = await Promise.all([launchChromium(), startSeededConsole()]);
});
afterAll(async () => {
  await browser?.close();
  await c?.close();
});

async function open(path: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({
    viewport: phone,
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
  });
  const { problems } = watch(page);
  await page.goto(c.url(path), { waitUntil: 'load' });
  return { page, problems };
}

/** How far the page is wider than the screen, in CSS pixels (0: no sideways scroll). */
const overflow = (page: Page) =>
  page.evaluate(() => {
    const root = (
      globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
    ).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });

interface Box {
  readonly top: number;
  readonly bottom: number;
  readonly right: number;
}

describe('at phone width', () => {
  it('no page scrolls sideways', async () => {
    const { seed } = c;
    for (const path of [
      '',
      `/runs/${seed.runs[0]?.id}`,
      '/groups',
      `/groups/${seed.groups[0]?.id}`,
      `/trajectories/${seed.hostileTrajectoryId}`,
      '/policies',
      '/experiments',
      `/experiments/${seed.experimentName}`,
      '/compare?a=agent@1&b=agent@2&split=eval',
      `/experiments/${seed.experimentName}/promote?arm=agent@2`,
    ]) {
      const { page, problems } = await open(path);
      expect(await overflow(page), path).toBeLessThanOrEqual(0);
      expect(problems, path).toEqual([]);
      await page.close();
    }
  });

  it("stacks a group's trajectories and fits the charts to the screen", async () => {
    const group = await open(`/groups/${c.seed.groups[0]?.id}`);
    const boxes = await group.page.locator('.trajectory-column[data-trajectory]').evaluateAll((columns) =>
      columns.map((column): Box => {
        const { top, bottom, right } = column.getBoundingClientRect();
        return { top, bottom, right };
      }),
    );
    expect(boxes.length).toBeGreaterThan(1);
    for (const [index, box] of boxes.entries()) {
      expect(box.right).toBeLessThanOrEqual(phone.width);
      if (index > 0) expect(box.top).toBeGreaterThanOrEqual((boxes[index - 1] as Box).bottom);
    }
    await group.page.close();

    const run = await open(`/runs/${c.seed.runs[0]?.id}`);
    expect((await drawnCharts(run.page)).length).toBe(7);
    const widths = await run.page
      .locator('.chart .uplot')
      .evaluateAll((charts) => charts.map((chart) => chart.getBoundingClientRect().right));
    for (const right of widths) expect(right).toBeLessThanOrEqual(phone.width);
    await run.page.close();
  });
});
