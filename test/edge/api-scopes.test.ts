// API key scopes on the Node edge (issue 31): a record key records and reads trajectories but cannot
// start rollouts or groups, nor use the console (sign-in, its API, promote, rollback); a rollout key
// adds rollouts and groups; EDGERL_EDGE_API_KEYS keep full access as before. Refusals are 403 naming the
// scope needed, never the key.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgeConfigFromEnv } from '../../edge/edge-config.ts';
import { type ConsoleSeed, seedConsoleStore } from '../support/seed-console.ts';
import { type EdgeHarness, startEdgeHarness, testApiKey } from './support/edge-harness.ts';

const recordKey = 'record-key-0123456789';
const rolloutKey = 'rollout-key-0123456789';
const missing = '00000000-0000-4000-8000-000000000000';

let h: EdgeHarness;
let seed: ConsoleSeed;
beforeAll(async () => {
  h = await startEdgeHarness({ config: { recordKeys: [recordKey], rolloutKeys: [rolloutKey] } });
  seed = await seedConsoleStore(h.store);
});
afterAll(async () => {
  await h?.close();
});

const as = (key: string, path: string, init: RequestInit & { json?: unknown } = {}) =>
  h.api(path, { ...init, headers: { ...init.headers, authorization: `Bearer ${key}` } });

async function expectForbidden(response: Response, scope: string) {
  expect(response.status).toBe(403);
  const body = (await response.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe('forbidden');
  expect(body.error.message).toContain(scope);
  expect(body.error.message).not.toContain(recordKey);
  expect(body.error.message).not.toContain(rolloutKey);
}

function signIn(key: string) {
  return fetch(`${h.edge.url}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { origin: h.edge.url, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ key, next: '/console/policies' }).toString(),
  });
}

async function defaultVersion(): Promise<string | null> {
  const result = await h.store.sql.query(
    'select v.adapter_name from policies p left join policy_versions v on v.id = p.default_version_id where p.name = $1',
    [seed.policyName],
  );
  return (result.rows[0]?.[0] as string | null) ?? null;
}

describe('a record-scope key', () => {
  it('is refused (403, naming the rollout scope) on rollouts and groups', async () => {
    await expectForbidden(await as(recordKey, '/v1/rollouts', { json: { env: 'multi-hop' } }), '"rollout"');
    await expectForbidden(await as(recordKey, '/v1/groups', { json: {} }), '"rollout"');
    await expectForbidden(await as(recordKey, '/v1/groups'), '"rollout"');
    await expectForbidden(await as(recordKey, `/v1/groups/${missing}`), '"rollout"');
  });

  it('needs admin on a /v1 resource the scope table does not name (a new route starts closed)', async () => {
    await expectForbidden(await as(recordKey, '/v1/not-a-resource'), '"admin"');
    await expectForbidden(await as(rolloutKey, '/v1/not-a-resource'), '"admin"');
    expect((await as(testApiKey, '/v1/not-a-resource')).status).toBe(404);
  });

  it('records and reads trajectories', async () => {
    // Past the scope check: the route itself answers (a missing trajectory, a bad proxy body).
    expect((await as(recordKey, `/v1/trajectories/${missing}`)).status).toBe(404);
    expect((await as(recordKey, '/v1/chat/completions', { json: { messages: 'nope' } })).status).toBe(400);
  });

  it('cannot sign in to the console, nor use its API, pages or actions', async () => {
    const before = await defaultVersion();
    const signIn403 = await signIn(recordKey);
    expect(signIn403.status).toBe(403);
    expect(signIn403.headers.get('set-cookie')).toBeNull();
    expect(await signIn403.text()).toContain('admin scope');
    await expectForbidden(await as(recordKey, '/console/api/groups?status=running'), 'admin');
    await expectForbidden(await as(recordKey, '/console/experiments'), 'admin');
    await expectForbidden(await as(recordKey, '/console/policies'), 'admin');
    const [, candidate] = seed.arms;
    const promote = await as(recordKey, `/console/experiments/${seed.experimentName}/promote`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ arm: candidate?.name ?? '' }).toString(),
    });
    await expectForbidden(promote, 'admin');
    await expectForbidden(
      await as(recordKey, `/console/policies/${seed.policyName}/rollback`, { method: 'POST' }),
      'admin',
    );
    expect(await defaultVersion()).toBe(before);
  });
});

describe('a rollout-scope key', () => {
  it('starts groups and reads them and trajectories, but not the console', async () => {
    expect((await as(rolloutKey, '/v1/groups')).status).toBe(200);
    // Past the scope check: the body is what is refused.
    expect((await as(rolloutKey, '/v1/rollouts', { json: { env: 'no-such-env' } })).status).toBe(400);
    expect((await as(rolloutKey, `/v1/trajectories/${missing}`)).status).toBe(404);
    expect((await signIn(rolloutKey)).status).toBe(403);
    await expectForbidden(await as(rolloutKey, '/console/api/groups?status=running'), 'admin');
  });
});

describe('an EDGERL_EDGE_API_KEYS key (admin)', () => {
  it('still works everywhere: /v1, the console API, and console sign-in', async () => {
    expect((await as(testApiKey, '/v1/groups')).status).toBe(200);
    expect((await as(testApiKey, '/v1/rollouts', { json: { env: 'no-such-env' } })).status).toBe(400);
    expect((await as(testApiKey, `/v1/trajectories/${missing}`)).status).toBe(404);
    expect((await as(testApiKey, '/console/api/groups?status=running')).status).toBe(200);
    expect((await as(testApiKey, '/console/experiments')).status).toBe(200);
    const signedIn = await signIn(testApiKey);
    expect(signedIn.status).toBe(303);
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    expect((await fetch(`${h.edge.url}/console/policies`, { headers: { cookie } })).status).toBe(200);
  });

  it('is what EDGERL_EDGE_API_KEYS alone configures, as before; scoped lists add keys, a key under two gets both', () => {
    const plain = edgeConfigFromEnv({
      EDGERL_INFERENCE_URL: 'http://127.0.0.1:8000/v1',
      EDGERL_EDGE_API_KEYS: 'a, b',
    });
    expect(plain.apiKeys).toEqual(['a', 'b']);
    expect(plain.recordKeys).toEqual([]);
    expect(plain.rolloutKeys).toEqual([]);
    const scoped = edgeConfigFromEnv({
      EDGERL_INFERENCE_URL: 'http://127.0.0.1:8000/v1',
      EDGERL_EDGE_API_KEYS: 'a',
      EDGERL_EDGE_RECORD_KEYS: ' r1 ,r2,,both',
      EDGERL_EDGE_ROLLOUT_KEYS: 'both',
      EDGERL_EDGE_TRUSTED_PROXIES: '1',
    });
    expect(scoped.recordKeys).toEqual(['r1', 'r2', 'both']);
    expect(scoped.rolloutKeys).toEqual(['both']);
    expect(scoped.trustedProxies).toBe(1);
    expect(() =>
      edgeConfigFromEnv({
        EDGERL_INFERENCE_URL: 'http://x/v1',
        EDGERL_EDGE_API_KEYS: 'a',
        EDGERL_EDGE_TRUSTED_PROXIES: '-1',
      }),
    ).toThrow(/EDGERL_EDGE_TRUSTED_PROXIES/);
  });
});
