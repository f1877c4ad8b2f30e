// The console mounted in the Node edge at /console, behind the edge's API key: a browser signs in
// with the key once and gets a session cookie; the /v1 API still wants its bearer key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedConsoleStore } from '../support/seed-console.ts';
import { type EdgeHarness, startEdgeHarness, testApiKey } from './support/edge-harness.ts';

let h: EdgeHarness;
beforeAll(async () => {
  h = await startEdgeHarness();
  await seedConsoleStore(h.store);
});
afterAll(async () => {
  await h?.close();
});

describe('the edge console', () => {
  it('asks a browser to sign in, then serves the pages on the session cookie', async () => {
    const url = h.edge.url;
    const first = await fetch(`${url}/console/policies`, { redirect: 'manual' });
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/console/sign-in?next=%2Fconsole%2Fpolicies');
    const form = await fetch(`${url}/console/sign-in`);
    expect(await form.text()).toContain('type="password"');

    const signIn = await fetch(`${url}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: url, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ key: testApiKey, next: '/console/policies' }).toString(),
    });
    expect(signIn.status).toBe(303);
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const page = await fetch(`${url}/console/policies`, { headers: { cookie } });
    expect(page.status).toBe(200);
    const text = await page.text();
    expect(text).toContain('agent@2');
    expect(text).toContain('http://10.0.0.8:8000/v1 quarantined');

    // The cookie is the console's only: /v1 still wants the bearer key.
    expect(
      (await fetch(`${url}/v1/groups/00000000-0000-4000-8000-000000000000`, { headers: { cookie } })).status,
    ).toBe(401);
    expect((await fetch(`${url}/console/`, { redirect: 'manual' })).headers.get('location')).toBe('/console');
  });

  it('takes the bearer key on its JSON API', async () => {
    const response = await h.api('/console/api/groups?status=running');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { groups: unknown[] };
    expect(body.groups).toHaveLength(1);
  });
});
