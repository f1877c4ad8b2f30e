// Bounded key guessing on the Node edge: five wrong keys from one client address, then 429 with
// Retry-After on /v1, /console/api and /console/sign-in alike (one limiter per edge), even for the
// right key; other clients unaffected; one log line per window without the key. The edge trusts one
// proxy here (EDGERL_EDGE_TRUSTED_PROXIES=1), so each test is its own client by X-Forwarded-For.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EdgeHarness, startEdgeHarness, testApiKey } from './support/edge-harness.ts';

const recordKey = 'record-key-for-guessing-0123';
let h: EdgeHarness;
beforeAll(async () => {
  h = await startEdgeHarness({ config: { trustedProxies: 1, recordKeys: [recordKey] } });
});
afterAll(async () => {
  await h?.close();
});

const bearer = (client: string, key: string, path = '/v1/groups') =>
  fetch(`${h.edge.url}${path}`, { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': client } });

const signIn = (client: string, key: string) =>
  fetch(`${h.edge.url}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      origin: h.edge.url,
      'content-type': 'application/x-www-form-urlencoded',
      'x-forwarded-for': client,
    },
    body: new URLSearchParams({ key, next: '/console' }).toString(),
  });

function expectBlocked(response: Response) {
  expect(response.status).toBe(429);
  expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
}

describe('guessing API keys', () => {
  it('on /v1: the sixth wrong key within the window gets 429 with Retry-After, and so does the right key', async () => {
    const client = '198.51.100.1';
    for (let attempt = 1; attempt <= 5; attempt++) {
      const refused = await bearer(client, `wrong-guess-${attempt}`);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('x-should-retry')).toBe('false');
    }
    const sixth = await bearer(client, 'wrong-guess-6');
    expectBlocked(sixth);
    // Worth retrying after Retry-After, unlike the 401s before it.
    expect(sixth.headers.get('x-should-retry')).toBe('true');
    expect(await sixth.json()).toMatchObject({ error: { code: 'too-many-requests' } });
    expectBlocked(await bearer(client, testApiKey));
    // The same limiter guards the console's API for that client; another client is let in.
    expectBlocked(await bearer(client, testApiKey, '/console/api/groups?status=running'));
    expect((await bearer('198.51.100.2', testApiKey)).status).toBe(200);
  });

  it('on /console/sign-in: five wrong keys, then 429 for the right one too', async () => {
    const client = '198.51.100.3';
    for (let attempt = 1; attempt <= 5; attempt++) {
      expect((await signIn(client, `wrong-sign-in-${attempt}`)).status).toBe(401);
    }
    const blocked = await signIn(client, testApiKey);
    expectBlocked(blocked);
    expect(blocked.headers.get('set-cookie')).toBeNull();
    expect(await blocked.text()).toContain('Too many wrong keys');
    expect((await signIn('198.51.100.4', testApiKey)).status).toBe(303);
  });

  it("does not let a lesser key's success reset the count between guesses", async () => {
    const client = '198.51.100.5';
    for (let attempt = 1; attempt <= 4; attempt++) {
      expect((await bearer(client, `admin-guess-${attempt}`)).status).toBe(401);
    }
    expect(
      (await bearer(client, recordKey, `/v1/trajectories/00000000-0000-4000-8000-000000000000`)).status,
    ).toBe(404);
    expect((await bearer(client, 'admin-guess-5')).status).toBe(401);
    expectBlocked(await bearer(client, 'admin-guess-6'));
    // An admin key's success does clear it (once the block is over; see protocol/guess-limiter.test.ts).
    const fresh = '198.51.100.6';
    for (let attempt = 1; attempt <= 4; attempt++)
      expect((await bearer(fresh, `g-${attempt}`)).status).toBe(401);
    expect((await bearer(fresh, testApiKey)).status).toBe(200);
    for (let attempt = 1; attempt <= 4; attempt++)
      expect((await bearer(fresh, `h-${attempt}`)).status).toBe(401);
    expect((await bearer(fresh, testApiKey)).status).toBe(200);
  });

  it('logs the failures by client, route and count, never the key nor its digest', () => {
    const lines = h.logs.filter((line) => line.includes('auth-failure'));
    expect(lines.some((line) => /client 198\.51\.100\.1, route GET \/v1\/groups, 1 wrong/.test(line))).toBe(
      true,
    );
    expect(lines.some((line) => /client 198\.51\.100\.1, .*5 wrong .*blocked for 60 s/.test(line))).toBe(
      true,
    );
    expect(lines.some((line) => /client 198\.51\.100\.3, route POST \/console\/sign-in/.test(line))).toBe(
      true,
    );
    // At most one line per client per window, plus the one that starts a block.
    expect(lines.filter((line) => line.includes('client 198.51.100.1,')).length).toBeLessThanOrEqual(2);
    const secrets = [testApiKey, recordKey, 'wrong-guess', 'wrong-sign-in', 'admin-guess'];
    for (const secret of [testApiKey, recordKey, 'wrong-guess-1', 'wrong-sign-in-1']) {
      const digest = createHash('sha256').update(secret).digest();
      secrets.push(digest.toString('hex'), digest.toString('base64url'), digest.toString('base64'));
    }
    for (const line of lines) for (const secret of secrets) expect(line).not.toContain(secret);
  });
});
