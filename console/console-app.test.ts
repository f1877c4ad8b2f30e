// The console's server side through Hono's request API on a seeded store: signing in (the cookie's
// flags and contents), what a signed-out request gets, the CSRF and same-origin rules on actions,
// escaping of model output, and the security headers. The browser tests cover the pages in Chromium.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleSeed, hostileAnswer, seedConsoleStore } from '../test/support/seed-console.ts';
import { openTestStore, type TestStore } from '../test/support/open-test-store.ts';
import { KeyRing } from '../protocol/key-ring.ts';
import { sessionSeconds } from './auth/session-token.ts';
import { createConsoleServer } from './console-server.ts';

const key = 'console-test-key-0123456789';
const origin = 'http://127.0.0.1:8788';
let test: TestStore;
let seed: ConsoleSeed;
let clock = Date.parse('2026-12-01T00:00:00Z');

const keysApp = () =>
  createConsoleServer({
    stores: { open: async () => ({ store: test.store, release: async () => {} }) },
    access: { kind: 'keys', keys: new KeyRing({ admin: ['other-key', key] }) },
    now: () => clock,
    logError: () => {},
  });

beforeAll(async () => {
  test = await openTestStore();
  seed = await seedConsoleStore(test.store);
});
afterAll(() => test?.close());

async function signIn(app: ReturnType<typeof keysApp>, url = `${origin}/console/sign-in`): Promise<Response> {
  return app.request(url, {
    method: 'POST',
    headers: { origin: new URL(url).origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ key, next: '/console/groups' }).toString(),
  });
}

function cookieOf(response: Response): string {
  const header = response.headers.get('set-cookie') ?? '';
  return header.split(';')[0] ?? '';
}

/** The CSRF token a page's forms carry. */
function csrfIn(page: string): string {
  return /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
}

async function defaultVersionName(): Promise<string | null> {
  const result = await test.store.sql.query(
    'select v.adapter_name from policies p left join policy_versions v on v.id = p.default_version_id where p.name = $1',
    [seed.policyName],
  );
  return (result.rows[0]?.[0] as string | null) ?? null;
}

describe('behind API keys', () => {
  it('sends a signed-out browser to the sign-in form and a signed-out script a 401', async () => {
    const app = keysApp();
    const page = await app.request(`${origin}/console/groups?status=running`);
    expect(page.status).toBe(303);
    expect(page.headers.get('location')).toBe('/console/sign-in?next=%2Fconsole%2Fgroups%3Fstatus%3Drunning');
    const api = await app.request(`${origin}/console/api/groups`);
    expect(api.status).toBe(401);
    expect(JSON.stringify(await api.json())).not.toContain('agent');
    expect((await app.request(`${origin}/console/assets/console.css`)).status).toBe(200);
  });

  it('signs in with a key: an HttpOnly, SameSite=Strict cookie that holds no key, Secure over https', async () => {
    const app = keysApp();
    const wrong = await app.request(`${origin}/console/sign-in`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'key=nope&next=%2Fconsole',
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();

    const response = await signIn(app);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/console/groups');
    const header = response.headers.get('set-cookie') ?? '';
    expect(header).toMatch(/^edgerl_console=\d+\.[A-Za-z0-9_-]{43};/);
    expect(header).toContain('HttpOnly');
    expect(header).toContain('SameSite=Strict');
    expect(header).toContain('Path=/console');
    expect(header).toContain(`Max-Age=${sessionSeconds}`);
    expect(header).not.toContain('Secure');
    expect(header).not.toContain(key);

    const secure = await signIn(app, 'https://console.example/console/sign-in');
    expect(secure.headers.get('set-cookie')).toContain('Secure');

    const page = await app.request(`${origin}/console/groups`, { headers: { cookie: cookieOf(response) } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('farah');
  });

  it('refuses a tampered or expired cookie, and signs in from its own origin only', async () => {
    const app = keysApp();
    const cookie = cookieOf(await signIn(app));
    const tampered = cookie.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
    expect((await app.request(`${origin}/console`, { headers: { cookie: tampered } })).status).toBe(303);
    const saved = clock;
    clock += (sessionSeconds + 1) * 1000;
    expect((await app.request(`${origin}/console`, { headers: { cookie } })).status).toBe(303);
    clock = saved;
    const crossSite = await app.request(`${origin}/console/sign-in`, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ key }).toString(),
    });
    expect(crossSite.status).toBe(403);
  });

  it('returns a browser only to console paths after sign-in', async () => {
    const app = keysApp();
    for (const next of [
      'https://evil.example/',
      '//evil.example/console',
      '/console//evil',
      '/elsewhere',
      '/console\\x',
    ]) {
      const response = await app.request(`${origin}/console/sign-in`, {
        method: 'POST',
        headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ key, next }).toString(),
      });
      expect(response.headers.get('location')).toBe('/console');
    }
  });

  it('accepts a bearer key from scripts', async () => {
    const app = keysApp();
    const response = await app.request(`${origin}/console/api/groups?status=running`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { groups: { group: { id: string } }[] };
    expect(body.groups.map((row) => row.group.id)).toEqual([seed.runningGroup.id]);
    const wrong = await app.request(`${origin}/console/api/groups`, {
      headers: { authorization: 'Bearer nope' },
    });
    expect(wrong.status).toBe(401);
  });
});

describe('actions', () => {
  it('promotes only with the CSRF token from the same origin, then rolls back the same way', async () => {
    const app = keysApp();
    const cookie = cookieOf(await signIn(app));
    const confirm = await app.request(
      `${origin}/console/experiments/${seed.experimentName}/promote?arm=agent@2`,
      {
        headers: { cookie },
      },
    );
    expect(confirm.status).toBe(200);
    const page = await confirm.text();
    expect(page).toContain('becomes the default version of');
    const csrf = csrfIn(page);
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const post = (headers: Record<string, string>, body: Record<string, string>) =>
      app.request(`${origin}/console/experiments/${seed.experimentName}/promote`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(body).toString(),
      });

    expect((await post({ origin }, { arm: 'agent@2' })).status).toBe(403);
    expect((await post({ origin }, { arm: 'agent@2', csrf: `${csrf.slice(1)}x` })).status).toBe(403);
    expect((await post({ 'sec-fetch-site': 'cross-site' }, { arm: 'agent@2', csrf })).status).toBe(403);
    expect((await post({ origin: 'https://evil.example' }, { arm: 'agent@2', csrf })).status).toBe(403);
    expect(await defaultVersionName()).toBe('agent@0');

    const done = await post({ origin, 'sec-fetch-site': 'same-origin' }, { arm: 'agent@2', csrf });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/console/policies?done=promoted&policy=agent');
    expect(await defaultVersionName()).toBe('agent@2');
    const stopped = await test.store.getAbExperiment(seed.experimentName);
    expect(stopped.experiment.status).toBe('stopped');

    const rollbackPage = await (
      await app.request(`${origin}/console/policies/agent/rollback`, { headers: { cookie } })
    ).text();
    expect(rollbackPage).toContain('goes back from');
    const rolledBack = await app.request(`${origin}/console/policies/agent/rollback`, {
      method: 'POST',
      headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfIn(rollbackPage) }).toString(),
    });
    expect(rolledBack.status).toBe(303);
    expect(await defaultVersionName()).toBe('agent@0');

    // Nothing left to roll back: the store's refusal comes back on the confirmation page.
    const again = await app.request(`${origin}/console/policies/agent/rollback`, {
      method: 'POST',
      headers: { cookie, origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: csrfIn(rollbackPage) }).toString(),
    });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('no promote left to roll back');
  });

  it('lets a bearer script act without a CSRF token (a browser never sends the header by itself)', async () => {
    const app = keysApp();
    const response = await app.request(`${origin}/console/policies/agent/rollback`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    // Reached the store (which has nothing to roll back now), not refused by the guard.
    expect(response.status).toBe(409);
  });
});

describe('pages', () => {
  const loopbackApp = () =>
    createConsoleServer({
      stores: { open: async () => ({ store: test.store, release: async () => {} }) },
      access: { kind: 'loopback' },
      logError: () => {},
    });

  it('answers only requests addressed to localhost when it has no key', async () => {
    const app = loopbackApp();
    expect((await app.request('http://localhost:8788/console/groups')).status).toBe(200);
    expect((await app.request('http://[::1]:8788/console/groups')).status).toBe(200);
    expect((await app.request('http://rebound.example:8788/console/groups')).status).toBe(403);
  });

  it('shows model output as text: markup in a turn does not become markup', async () => {
    const response = await loopbackApp().request(
      `http://127.0.0.1/console/trajectories/${seed.hostileTrajectoryId}`,
    );
    const page = await response.text();
    expect(page).not.toContain(hostileAnswer);
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('&lt;script&gt;window.__pwned = true&lt;/script&gt;');
  });

  it('sends a strict CSP, nosniff and no framing, and never caches pages', async () => {
    const response = await loopbackApp().request('http://127.0.0.1/console/policies');
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('answers a missing row with 404 and a bad id with 400, without the SQL', async () => {
    const app = loopbackApp();
    const missing = await app.request('http://127.0.0.1/console/groups/00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
    const bad = await app.request('http://127.0.0.1/console/groups/not-an-id');
    expect(bad.status).toBe(400);
    expect(await bad.text()).not.toMatch(/select|from "/i);
    const api = await app.request(
      `http://127.0.0.1/console/api/groups/${seed.runningGroup.id}/live?after=nope`,
    );
    expect(api.status).toBe(400);
  });
});
