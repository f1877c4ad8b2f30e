// Promote and rollback from the page, against `edgerl console` itself (a child process, behind
// EDGERL_EDGE_API_KEYS so the browser signs in first), on a seeded store: after each, the policy's default
// version in SQL is the one the page said. The embedded store allows one process at a time, so the
// console is stopped before the test reads it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../db/drivers/open-store.ts';
import { seedConsoleStore } from '../support/seed-console.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/open-test-store.ts';
import { launchChromium, watch } from './support/browser.ts';
import { type SpawnedConsole, spawnConsole } from './support/spawn-console.ts';

const key = 'browser-test-key-0123456789';
let browser: Browser;
let dataDir: string | undefined;
let database: TestDatabase | undefined;
let running: SpawnedConsole | undefined;

/** Where the child's store is: a server database when the suite has one, else an embedded directory. */
const storeEnv = (): Record<string, string> =>
  database ? { DATABASE_URL: database.url } : { EDGERL_DATA_DIR: dataDir as string };
const openTarget = () =>
  database ? openStore({ url: database.url, migrations: 'apply' }) : openStore({ dataDir });

async function defaultVersion(): Promise<unknown> {
  const store = await openTarget();
  try {
    const result = await store.sql.query(
      "select v.adapter_name from policies p join policy_versions v on v.id = p.default_version_id where p.name = 'agent'",
    );
    return result.rows[0]?.[0];
  } finally {
    await store.close();
  }
}

async function signedIn(path: string): Promise<{ page: Page; problems: string[] }> {
  running = await spawnConsole([], { ...storeEnv(), EDGERL_EDGE_API_KEYS: key });
  const page = await browser.newPage();
  const { problems } = watch(page);
  await page.goto(`${running.url}${path}`);
  expect(new URL(page.url()).pathname).toBe('/console/sign-in');
  await page.fill('input[name="key"]', key);
  await page.click('button[type="submit"]');
  await page.waitForURL((url) => url.pathname === `/console${path}`);
  return { page, problems };
}

beforeAll(async () => {
  browser = await launchChromium();
  if (testServerUrl) database = await createTestDatabase(testServerUrl);
  else dataDir = join(await mkdtemp(join(tmpdir(), 'edgerl-console-')), 'pgdata');
  const store = await openTarget();
  try {
    await seedConsoleStore(store);
  } finally {
    await store.close();
  }
});
afterAll(async () => {
  await running?.stop();
  await browser?.close();
  await database?.drop();
  if (dataDir) await rm(join(dataDir, '..'), { recursive: true, force: true });
});

describe('edgerl console in the browser', () => {
  it('promotes an arm after confirmation: the default version in SQL changes', async () => {
    expect(await defaultVersion()).toBe('agent@0');
    const { page, problems } = await signedIn('/policies');
    await page.locator('[data-version="agent@2"] a.button', { hasText: 'Promote' }).click();
    await page.getByRole('heading', { name: 'Promote agent@2?' }).waitFor();
    // Nothing changes before the confirmation.
    expect(await page.locator('text=becomes the default version of').count()).toBe(1);
    await page.getByRole('button', { name: 'Promote agent@2' }).click();
    await page.waitForURL(/\/console\/policies\?done=promoted/);
    expect(await page.locator('[data-policy="agent"] .default-version').textContent()).toBe('agent@2');
    expect(await page.getByRole('status').textContent()).toContain('default version is now agent@2');
    expect(problems).toEqual([]);
    await page.close();
    expect(await running?.stop()).toBe(0);
    expect(await defaultVersion()).toBe('agent@2');
  });

  it('rolls the promote back after confirmation: the default in SQL is the old one again', async () => {
    const { page, problems } = await signedIn('/policies');
    await page.getByRole('link', { name: 'Roll back the last promote…' }).click();
    await page.getByRole('button', { name: 'Roll back to agent@0' }).click();
    await page.waitForURL(/\/console\/policies\?done=rolled-back/);
    expect(await page.locator('[data-policy="agent"] .default-version').textContent()).toBe('agent@0');
    expect(await page.locator('[data-policy="agent"] table tbody tr').count()).toBe(2);
    expect(problems).toEqual([]);
    await page.close();
    expect(await running?.stop()).toBe(0);
    expect(await defaultVersion()).toBe('agent@0');
  });
});
