// The web console inside workerd, mounted by the Worker's app at /console: a browser signs in with the
// Worker's API key and gets a Secure session cookie (the Worker is served over https), the embedded
// assets are served with no file system, and on a database the pages and the live poll answer from
// the Neon store. Database tests need EDGERL_TEST_DATABASE_URL (CI's server run).
import { SELF } from 'cloudflare:test';
import { describe, expect, inject, it } from 'vitest';
import { embeddedAssets } from '../../console/assets/embedded-assets.ts';
import { seedConsoleStore } from '../support/seed-console.ts';
import { openWorkerdTestStore } from './neon-test-store.ts';

const context = inject('workerd');
const key = 'workerd-test-key';
const origin = 'https://edge.test';

async function signIn(): Promise<string> {
  const response = await SELF.fetch(`${origin}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ key, next: '/console/groups' }).toString(),
  });
  expect(response.status).toBe(303);
  const header = response.headers.get('set-cookie') ?? '';
  expect(header).toContain('HttpOnly');
  expect(header).toContain('Secure');
  expect(header).toContain('SameSite=Strict');
  expect(header).not.toContain(key);
  return header.split(';')[0] ?? '';
}

describe('the console in the Worker', () => {
  it('sends a signed-out browser to sign in, and serves the sign-in form and the assets', async () => {
    const page = await SELF.fetch(`${origin}/console/policies`, { redirect: 'manual' });
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/console/sign-in?next=%2Fconsole%2Fpolicies');
    expect(await (await SELF.fetch(`${origin}/console/sign-in`)).text()).toContain('type="password"');
    const script = await SELF.fetch(`${origin}/console/assets/uplot.js`);
    expect(script.headers.get('content-type')).toContain('javascript');
    expect(await script.text()).toBe(embeddedAssets['uplot.js'].body);
    await signIn();
  });
});

describe.runIf(context.databaseUrl)('the console in the Worker on Postgres', () => {
  it('serves a group and its live poll from the Neon store', async () => {
    const store = await openWorkerdTestStore();
    let groupId: string;
    try {
      const seed = await seedConsoleStore(store, { policyName: `agent-${crypto.randomUUID().slice(0, 8)}` });
      groupId = seed.runningGroup.id;
    } finally {
      await store.close();
    }
    const cookie = await signIn();
    const page = await SELF.fetch(`${origin}/console/groups/${groupId}`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('data-live-group');
    const live = await SELF.fetch(`${origin}/console/api/groups/${groupId}/live`, { headers: { cookie } });
    const body = (await live.json()) as { group: { status: string }; turns: unknown[] };
    expect(body.group.status).toBe('running');
    expect(body.turns).toHaveLength(6);
  });
});
