// `edgerl console`'s sign-in over HTTP (the server startConsole runs for the command): a key without
// the admin scope is refused by name of the scope; five wrong keys from an address, then 429 with
// Retry-After even for the right key, lifted once it passes (the limiter's clock is injected).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyRing } from '../../protocol/key-ring.ts';
import { openTestStore, type TestStore } from '../../test/support/open-test-store.ts';
import { type RunningConsole, startConsole } from './start-console.ts';

const adminKey = 'console-admin-key-0123456789';
const recordKey = 'console-record-key-0123456789';
const clock = { now: Date.parse('2026-12-01T00:00:00Z') };
const lines: string[] = [];
let test: TestStore;
let running: RunningConsole;

beforeAll(async () => {
  test = await openTestStore();
  running = await startConsole({
    store: test.store,
    access: { kind: 'keys', keys: new KeyRing({ admin: [adminKey], record: [recordKey] }) },
    port: 0,
    now: () => clock.now,
    log: (line) => lines.push(line),
    logError: () => {},
  });
});
afterAll(async () => {
  await running?.close();
  await test?.close();
});

const signIn = (key: string) =>
  fetch(`${running.url}/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { origin: new URL(running.url).origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ key, next: '/console' }).toString(),
  });

describe('edgerl console sign-in', () => {
  it('refuses a key without the admin scope, saying which scope it needs', async () => {
    const refused = await signIn(recordKey);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('set-cookie')).toBeNull();
    const text = await refused.text();
    expect(text).toContain('admin scope');
    expect(text).not.toContain(recordKey);
    expect((await signIn(adminKey)).status).toBe(303);
  });

  it('blocks the sixth wrong key, and the right one, until Retry-After has passed', async () => {
    for (let attempt = 1; attempt <= 5; attempt++)
      expect((await signIn(`wrong-${attempt}`)).status).toBe(401);
    const blocked = await signIn(adminKey);
    expect(blocked.status).toBe(429);
    const retryAfter = Number(blocked.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    clock.now += retryAfter * 1000;
    expect((await signIn(adminKey)).status).toBe(303);
    expect(
      lines.some((line) => /auth-failure: client 127\.0\.0\.1, route POST \/console\/sign-in/.test(line)),
    ).toBe(true);
    for (const line of lines) expect(line).not.toMatch(/wrong-\d|console-admin-key/);
  });
});
