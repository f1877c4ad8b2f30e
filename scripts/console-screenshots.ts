// Screenshots of every console page for docs/console.md, from the seeded store the browser tests use
// (test/support/seed-console.ts) served in this process: `npm run console:screenshots`. Needs Chromium
// (Debian's package; EDGERL_CHROMIUM to point elsewhere). Writes docs/console/*.png.
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { openStore } from '../db/drivers/open-store.ts';
import { startConsole } from '../cli/console/start-console.ts';
import { launchChromium } from '../test/console/support/browser.ts';
import { seedConsoleStore } from '../test/support/seed-console.ts';

const out = resolve(import.meta.dirname, '..', 'docs', 'console');
const store = await openStore({ url: 'memory://' });
const seed = await seedConsoleStore(store);
const running = await startConsole({ store, access: { kind: 'loopback' }, port: 0 });
const browser = await launchChromium();
try {
  await mkdir(out, { recursive: true });
  const shots: { name: string; path: string; phone?: boolean; full?: boolean }[] = [
    { name: 'runs', path: '' },
    { name: 'run', path: `/runs/${seed.runs[0]?.id}` },
    { name: 'groups', path: '/groups' },
    { name: 'group', path: `/groups/${seed.groups[0]?.id}` },
    { name: 'trajectory', path: `/trajectories/${seed.hostileTrajectoryId}` },
    { name: 'policies', path: '/policies' },
    { name: 'promote', path: `/experiments/${seed.experimentName}/promote?arm=agent@2` },
    { name: 'experiment', path: `/experiments/${seed.experimentName}?split=eval` },
    { name: 'compare', path: '/compare?a=agent@1&b=agent@2&split=eval' },
    { name: 'group-phone', path: `/groups/${seed.groups[0]?.id}`, phone: true },
  ];
  for (const shot of shots) {
    const page = await browser.newPage(
      shot.phone
        ? { viewport: { width: 390, height: 844 }, deviceScaleFactor: 1, isMobile: true }
        : { viewport: { width: 1280, height: 800 } },
    );
    await page.goto(`${running.url}${shot.path}`, { waitUntil: 'load' });
    const file = join(out, `${shot.name}.png`);
    await page.screenshot({ path: file, fullPage: false });
    await page.close();
    console.log(`wrote ${file}`);
  }
} finally {
  await browser.close();
  await running.close();
  await store.close();
}
