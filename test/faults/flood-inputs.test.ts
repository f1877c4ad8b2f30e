// Fault scenario: a bounded burst (200 requests, 20 at a time, loopback only) of mixed hostile bodies
// against a real `edgerl edge` process. Checks: no 5xx, /health still answers, and no row written.
// Every request in the burst is one the edge must refuse, so the store must be empty afterwards.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type OpenStoreOptions } from '../../db/drivers/open-store.ts';
import { rolloutGroups } from '../../db/schema/rollout-groups.ts';
import { tasks } from '../../db/schema/tasks.ts';
import { trajectories } from '../../db/schema/trajectories.ts';
import { turns } from '../../db/schema/turns.ts';
import { spawnEdge } from '../support/spawn-edge.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/open-test-store.ts';

const apiKey = 'flood-key';
const burst = 200;
const inFlight = 20;
const missingId = '00000000-0000-4000-8000-000000000000';

interface Hostile {
  readonly what: string;
  readonly path: string;
  readonly init: RequestInit;
}

function post(path: string, body: string): Omit<Hostile, 'what'> {
  return { path, init: { method: 'POST', body, headers: { 'content-type': 'application/json' } } };
}

const deep = `{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
const hostile: readonly Hostile[] = [
  {
    what: 'deep metadata, trajectory',
    ...post('/v1/trajectories', `{"env":"multi-hop","metadata":${deep}}`),
  },
  {
    what: 'deep metadata, rollout',
    ...post('/v1/rollouts', `{"env":"multi-hop","groupSize":2,"metadata":${deep}}`),
  },
  {
    what: 'deep metadata, group',
    ...post('/v1/groups', `{"env":"multi-hop","groupSize":2,"metadata":${deep}}`),
  },
  {
    what: 'unknown policy (after the task is sampled)',
    ...post('/v1/rollouts', JSON.stringify({ env: 'multi-hop', groupSize: 2, policy: 'nobody' })),
  },
  {
    what: 'unknown policy, group',
    ...post('/v1/groups', JSON.stringify({ env: 'multi-hop', groupSize: 2, policy: 'nobody' })),
  },
  {
    what: 'NUL in rollout metadata',
    ...post('/v1/rollouts', JSON.stringify({ env: 'multi-hop', groupSize: 2, metadata: { x: '\u0000' } })),
  },
  {
    what: 'lone surrogate in trajectory metadata',
    ...post('/v1/trajectories', JSON.stringify({ env: 'multi-hop', metadata: { x: '\uD800' } })),
  },
  {
    what: 'unknown settings key',
    ...post('/v1/rollouts', JSON.stringify({ env: 'multi-hop', groupSize: 2, settings: { topP: 0.9 } })),
  },
  { what: 'not JSON', ...post('/v1/rollouts', '{"env": "multi-hop", ') },
  { what: 'too large', ...post('/v1/rollouts', JSON.stringify({ env: 'x'.repeat(100_000), groupSize: 1 })) },
  { what: 'group of 0', ...post('/v1/rollouts', JSON.stringify({ env: 'multi-hop', groupSize: 0 })) },
  { what: 'after beyond int4', path: `/v1/trajectories/${missingId}/events?after=3000000000`, init: {} },
  {
    what: 'Last-Event-ID beyond int4',
    path: `/v1/trajectories/${missingId}/events`,
    init: { headers: { 'last-event-id': '3000000000' } },
  },
];

let dataDir: string;
let database: TestDatabase | undefined;
let storeOptions: OpenStoreOptions;
let child: ChildProcess | undefined;
let url: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'edgerl-flood-'));
  if (testServerUrl) {
    database = await createTestDatabase(testServerUrl);
    storeOptions = { url: database.url };
    // A server store is migrated by whoever deploys it, not by the edge: do it here.
    await (await openStore({ url: database.url, migrations: 'apply' })).close();
  } else {
    storeOptions = { dataDir };
  }
  const storeArgs = database ? ['--database-url', database.url] : ['--data-dir', dataDir];
  const started = await spawnEdge([
    ...storeArgs,
    '--api-key',
    apiKey,
    // Nothing listens there: no request in the burst may get as far as an episode.
    '--inference-url',
    'http://127.0.0.1:9/v1',
    '--default-model',
    'tiny-base',
  ]);
  child = started.child;
  url = started.url;
}, 90_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await once(child, 'exit');
  }
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('a flood of hostile inputs', () => {
  it('gets only 4xx answers, leaves the edge answering /health, and writes no row', async (context) => {
    const statuses = new Map<string, Set<number>>();
    for (let start = 0; start < burst; start += inFlight) {
      await Promise.all(
        Array.from({ length: Math.min(inFlight, burst - start) }, async (_, offset) => {
          const request = hostile[(start + offset) % hostile.length] as Hostile;
          const headers = new Headers(request.init.headers);
          headers.set('authorization', `Bearer ${apiKey}`);
          const response = await fetch(`${url}${request.path}`, {
            ...request.init,
            headers,
            signal: AbortSignal.timeout(20_000),
          });
          const body = (await response.json()) as { error?: { code?: string } };
          expect(body.error?.code, request.what).toBeTypeOf('string');
          const seen = statuses.get(request.what) ?? new Set<number>();
          seen.add(response.status);
          statuses.set(request.what, seen);
        }),
      );
    }
    for (const [what, seen] of statuses) {
      for (const status of seen) expect(status >= 400 && status < 500, `${what}: ${status}`).toBe(true);
    }
    expect(statuses.size).toBe(hostile.length);
    const health = await fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) });
    expect(health.status).toBe(200);

    // Stop the edge (it holds the embedded store's directory), then count what it wrote.
    const running = child as ChildProcess;
    running.kill('SIGINT');
    const [code] = await once(running, 'exit');
    expect(code).toBe(0);
    const store = await openStore(storeOptions);
    try {
      const counts = {
        tasks: await store.db.$count(tasks),
        groups: await store.db.$count(rolloutGroups),
        trajectories: await store.db.$count(trajectories),
        turns: await store.db.$count(turns),
      };
      // Every request was refused, so every row is debris a failed request left behind.
      const debris = counts.tasks + counts.groups + counts.trajectories + counts.turns;
      recordFaultOutcome(context, { lostTurns: 0, duplicates: 0, leaks: debris });
      expect(debris).toBe(0);
      expect(counts).toEqual({ tasks: 0, groups: 0, trajectories: 0, turns: 0 });
    } finally {
      await store.close();
    }
  }, 120_000);
});
