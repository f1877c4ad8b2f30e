// A running group's page in Chromium gains turns as they are stored, without a reload: the test
// appends turns and finishes a trajectory through the Store while the page is open, and checks the
// page is the same document (a marker set on it survives) with the new turns and status in it.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, watch } from './support/browser.ts';
import { type SeededConsole, startSeededConsole } from './support/seeded-console.ts';

let browser: Browser;
let c: SeededConsole;

beforeAll(async () => {
  [browser, c] = await Promise.all([launchChromium(), startSeededConsole({ pollMs: 150 })]);
});
afterAll(async () => {
  await browser?.close();
  await c?.close();
});

describe('a running group', () => {
  it('gains turns and statuses as they arrive, in the same page', async () => {
    const page = await browser.newPage();
    const { problems } = watch(page);
    await page.goto(c.url(`/groups/${c.seed.runningGroup.id}`));
    await page.evaluate(() => {
      (globalThis as unknown as { sameDocument: boolean }).sameDocument = true;
    });
    const [first, second] = c.seed.runningGroup.trajectoryIds as [string, string];
    const column = (id: string) => page.locator(`.trajectory-column[data-trajectory="${id}"]`);
    expect(await column(first).locator('li').count()).toBe(2);

    await c.store.appendTurns([
      {
        trajectoryId: first,
        index: 2,
        role: 'assistant',
        content: null,
        toolCalls: [
          { id: 'live-call', type: 'function', function: { name: 'lookup', arguments: '{"key":"farah"}' } },
        ],
      },
      {
        trajectoryId: first,
        index: 3,
        role: 'tool',
        toolCallId: 'live-call',
        content: 'farah → office 9 <b>bold?</b>',
      },
    ]);
    await column(first).locator('li[data-turn-index="3"]').waitFor({ timeout: 10_000 });
    expect(await column(first).locator('li[data-turn-index="2"] .tool-call b').textContent()).toBe('lookup');
    expect(await column(first).locator('li[data-turn-index="3"] .text').textContent()).toBe(
      'farah → office 9 <b>bold?</b>',
    );
    expect(await column(first).locator('li[data-turn-index="3"] b').count()).toBe(0);

    await c.store.appendTurns([
      { trajectoryId: second, index: 2, role: 'assistant', content: 'farah lives in Lisbon.' },
    ]);
    await c.store.finishTrajectory({ trajectoryId: second, status: 'finished', verifierReward: 1 });
    await column(second).locator('.status .badge.finished').waitFor({ timeout: 10_000 });
    expect(await column(second).locator('li[data-turn-index="2"] .text').textContent()).toBe(
      'farah lives in Lisbon.',
    );
    expect(await column(second).locator('.reward-verifier').textContent()).toBe('1.000');

    expect(
      await page.evaluate(() => (globalThis as unknown as { sameDocument?: boolean }).sameDocument),
    ).toBe(true);
    expect(await page.locator('[data-live-group]').getAttribute('data-polls')).not.toBeNull();
    expect(problems).toEqual([]);
    await page.close();
  });

  it('stops polling and says so once the group has ended', async () => {
    const page = await browser.newPage();
    const { problems } = watch(page);
    await page.goto(c.url(`/groups/${c.seed.runningGroup.id}`));
    for (const trajectoryId of c.seed.runningGroup.trajectoryIds) {
      const { trajectory } = await c.store.getTrajectory(trajectoryId);
      if (trajectory.status === 'running') {
        await c.store.finishTrajectory({ trajectoryId, status: 'truncated', errorReason: 'max-turns' });
      }
    }
    await page.locator('.group-status .badge.complete').waitFor({ timeout: 10_000 });
    await page.getByText('The group is complete now').waitFor({ timeout: 10_000 });
    const polls = await page.locator('[data-live-group]').getAttribute('data-polls');
    await page.waitForTimeout(600);
    expect(await page.locator('[data-live-group]').getAttribute('data-polls')).toBe(polls);
    expect(problems).toEqual([]);
    await page.close();
  });
});
