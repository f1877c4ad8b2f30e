// `edgerl policy create | list | show` through the CLI dispatcher, against an embedded store in a
// temporary directory (or a fresh database when EDGERL_TEST_DATABASE_URL is set): a created policy
// has its base as version 0, the default, so a rollout can route to it before any training.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import { openStore } from '../../db/drivers/open-store.ts';
import { resolveRoute } from '../../edge/routing/resolve-route.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/open-test-store.ts';

let dir: string;
let database: TestDatabase | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'edgerl-policy-cli-'));
  database = testServerUrl ? await createTestDatabase(testServerUrl) : undefined;
  env = database ? { DATABASE_URL: database.url } : { EDGERL_DATA_DIR: join(dir, 'pgdata') };
  // A server is migrated by its operator (edgerl db migrate); the embedded store migrates itself.
  if (database) await (await openStore({ url: database.url, migrations: 'apply' })).close();
});
afterAll(async () => {
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk) => (out += chunk));
  stderr.on('data', (chunk) => (err += chunk));
  const code = await main(args, { stdout, stderr, env });
  return { code, out, err };
}

describe('edgerl policy', () => {
  it('creates a policy whose default is its base, routable at once, and refuses a second of the name', async () => {
    const created = await run(['policy', 'create', 'agent', '--base-model', 'tiny-qwen']);
    expect(created).toMatchObject({ code: 0, err: '' });
    expect(created.out).toBe('created policy agent (base tiny-qwen); its default is agent@0\n');
    const store = await openStore(
      database ? { url: database.url, migrations: 'apply' } : { dataDir: join(dir, 'pgdata') },
    );
    try {
      const route = await resolveRoute(store, { policy: 'agent', stickinessKey: 'user-1' }, undefined);
      expect(route.model).toBe('tiny-qwen');
    } finally {
      await store.close();
    }
    const again = await run(['policy', 'create', 'agent', '--base-model', 'tiny-qwen']);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/^edgerl policy create: .*agent/);
    expect(again.err.trim().split('\n')).toHaveLength(1);
  });

  it('lists and shows policies, as text and as JSON', async () => {
    expect((await run(['policy', 'create', 'other', '--base-model', 'qwen2.5-0.5b'])).code).toBe(0);
    const list = await run(['policy', 'list']);
    expect(list.code).toBe(0);
    expect(list.out.split('\n').slice(0, 3)).toEqual([
      'policy  base model    default  versions',
      'agent   tiny-qwen     agent@0  1',
      'other   qwen2.5-0.5b  other@0  1',
    ]);
    const json = JSON.parse((await run(['policy', 'list', '--json'])).out) as unknown[];
    expect(json).toEqual([
      { name: 'agent', baseModel: 'tiny-qwen', defaultVersion: 'agent@0', versions: 1 },
      { name: 'other', baseModel: 'qwen2.5-0.5b', defaultVersion: 'other@0', versions: 1 },
    ]);
    const show = await run(['policy', 'show', 'agent']);
    expect(show.code).toBe(0);
    expect(show.out).toMatch(
      /^policy agent \(base tiny-qwen\)\n +version +status +trained by run +created\n\* +agent@0 +published +base /,
    );
    const missing = await run(['policy', 'show', 'nobody']);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain('edgerl policy list');
  });

  it('asks for --base-model and one name', async () => {
    expect((await run(['policy', 'create', 'x'])).err).toContain('--base-model is required');
    expect((await run(['policy', 'create', '--base-model', 'm'])).code).toBe(2);
  });
});
