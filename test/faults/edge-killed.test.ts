// Fault scenario: `kill -9` of a real `edgerl edge` mid-rollout (turns stored, no group complete),
// then another edge on the same store. Counted from the store afterwards: every turn stored before
// the kill is still there unchanged, nothing is stored twice (a (trajectory, index) pair, a tool call
// answered twice), and nothing is left behind (a running trajectory or group, a held lease, a live
// process we started, the embedded store's lock). On the embedded store and on the Postgres server;
// on the server also two edges, one killed: the live one keeps its episodes while it beats, and its
// sweep takes the dead one's over once their lease lapses. The inference double (a test double for
// the policy endpoint) answers slowly so that the kill lands mid-episode.
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OpenStoreOptions, openStore } from '../../db/drivers/open-store.ts';
import type { Store } from '../../db/store.ts';
import { type InferenceDouble, startInferenceDouble } from '../edge/support/inference-double.ts';
import { createTestDatabase, type TestDatabase, testServerUrl } from '../support/open-test-store.ts';
import { type SpawnedEdge, spawnEdge } from '../support/spawn-edge.ts';
import { recordFaultOutcome } from './support/fault-outcome.ts';

const apiKey = 'edge-killed-key';
/** A short lease, so a takeover after expiry happens within the test; the sweep runs every second. */
const leaseEnv = { EDGERL_EPISODE_LEASE_SECONDS: '2', EDGERL_EPISODE_SWEEP_SECONDS: '1' };

let double: InferenceDouble;
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  double = await startInferenceDouble();
});
afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  }
  for (const cleanup of cleanups) await cleanup();
  await double?.close();
});

interface Target {
  readonly args: readonly string[];
  readonly storeOptions: OpenStoreOptions;
  /** The embedded store's lock file, which must not outlive its edge. */
  readonly lockFile?: string;
}

async function embeddedTarget(): Promise<Target> {
  const dir = await mkdtemp(join(tmpdir(), 'edgerl-killed-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const dataDir = join(dir, 'pgdata');
  return { args: ['--data-dir', dataDir], storeOptions: { dataDir }, lockFile: `${dataDir}.lock` };
}

async function serverTarget(serverUrl: string): Promise<Target> {
  const database: TestDatabase = await createTestDatabase(serverUrl);
  cleanups.push(() => database.drop());
  await (await openStore({ url: database.url, migrations: 'apply' })).close();
  return { args: ['--database-url', database.url], storeOptions: { url: database.url } };
}

async function startEdge(target: Target, runner: string, concurrency: number): Promise<SpawnedEdge> {
  const edge = await spawnEdge(
    [
      ...target.args,
      '--api-key',
      apiKey,
      '--inference-url',
      double.baseUrl,
      '--default-model',
      'tiny-base',
      '--runner',
      runner,
      '--concurrency',
      String(concurrency),
    ],
    90_000,
    leaseEnv,
  );
  children.push(edge.child);
  return edge;
}

async function api<T>(edge: SpawnedEdge, path: string, json?: unknown): Promise<T> {
  const response = await fetch(`${edge.url}${path}`, {
    method: json === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function startGroups(edge: SpawnedEdge, sizes: readonly number[], seed: number): Promise<string[]> {
  const ids: string[] = [];
  for (const [offset, groupSize] of sizes.entries()) {
    const started = await api<{ groupId: string }>(edge, '/v1/rollouts', {
      env: 'multi-hop',
      groupSize,
      taskSeed: seed + offset,
    });
    ids.push(started.groupId);
  }
  return ids;
}

interface GroupView {
  readonly group: { status: string };
  readonly trajectories: { turns: { role: string }[] }[];
}

/** Waits, through the live edge's API, until assistant turns are stored and before any group completes. */
async function untilMidway(edge: SpawnedEdge, groupIds: readonly string[], assistantTurns: number) {
  await expect
    .poll(
      async () => {
        const views = await Promise.all(
          groupIds.map((id) => api<GroupView>(edge, `/v1/groups/${id}?turns=true`)),
        );
        const replies = views
          .flatMap((view) => view.trajectories)
          .flatMap((trajectory) => trajectory.turns)
          .filter((turn) => turn.role === 'assistant').length;
        if (views.some((view) => view.group.status !== 'running')) throw new Error('a group completed first');
        return replies >= assistantTurns;
      },
      { timeout: 60_000, interval: 50 },
    )
    .toBe(true);
}

async function kill(edge: SpawnedEdge): Promise<void> {
  edge.child.kill('SIGKILL');
  await once(edge.child, 'exit');
}

async function stop(edge: SpawnedEdge): Promise<void> {
  edge.child.kill('SIGINT');
  await once(edge.child, 'exit');
}

async function withStore<T>(target: Target, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore({ ...target.storeOptions, migrations: 'apply' });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

interface StoredTurn {
  readonly key: string;
  readonly json: string;
}

interface Ledger {
  readonly turns: StoredTurn[];
  readonly trajectories: {
    id: string;
    groupId: string | null;
    status: string;
    runner: string | null;
    resumes: number;
    verifierReward: number | null;
    turnCount: number;
  }[];
  readonly groups: { id: string; status: string }[];
  /** Pairs stored more than once, and tool calls answered more than once within a trajectory. */
  readonly duplicates: number;
  /** Trajectories whose indexes are not 0…n-1 or disagree with their turn count. */
  readonly gaps: number;
  readonly heldLeases: number;
}

async function ledger(store: Store, groupIds: readonly string[]): Promise<Ledger> {
  const turns: StoredTurn[] = [];
  const trajectories: Ledger['trajectories'] = [];
  const groups: Ledger['groups'] = [];
  let duplicates = 0;
  let gaps = 0;
  for (const groupId of groupIds) {
    const view = await store.getGroup({ groupId, includeTurns: true });
    groups.push({ id: view.group.id, status: view.group.status });
    for (const trajectory of view.trajectories) {
      const stored = trajectory.turns ?? [];
      trajectories.push(trajectory);
      for (const turn of stored) {
        turns.push({ key: `${trajectory.id}/${turn.index}`, json: JSON.stringify(turn) });
      }
      const answered = stored.flatMap((turn) => (turn.toolCallId ? [turn.toolCallId] : []));
      duplicates += answered.length - new Set(answered).size;
      const contiguous = stored.every((turn, index) => turn.index === index);
      if (!contiguous || stored.length !== trajectory.turnCount) gaps += 1;
    }
  }
  const pairs = await store.sql.query(
    'select count(*)::int - count(distinct (trajectory_id, index))::int from turns',
  );
  duplicates += Number(pairs.rows[0]?.[0] ?? 0);
  const held = await store.sql.query(
    `select count(*)::int from trajectories where lease_expires_at is not null and (status <> 'running' or lease_expires_at > now())`,
  );
  return { turns, trajectories, groups, duplicates, gaps, heldLeases: Number(held.rows[0]?.[0] ?? 0) };
}

/** Turns in `before` missing from `after`, or stored there with other content. */
function lostTurns(before: readonly StoredTurn[], after: readonly StoredTurn[]): number {
  const now = new Map(after.map((turn) => [turn.key, turn.json]));
  return before.filter((turn) => now.get(turn.key) !== turn.json).length;
}

function leftRunning(after: Ledger): number {
  return (
    after.trajectories.filter((trajectory) => trajectory.status === 'running').length +
    after.groups.filter((group) => group.status === 'running').length
  );
}

async function killedAndRestarted(target: Target, context: Parameters<typeof recordFaultOutcome>[0]) {
  double.delayMs = 400;
  const first = await startEdge(target, 'edge-restarted', 4);
  const groupIds = await startGroups(first, [3, 3, 3], 40);
  await untilMidway(first, groupIds, 3);
  await kill(first);
  double.delayMs = 50;
  const before = await withStore(target, (store) => ledger(store, groupIds));
  // The kill landed mid-rollout: turns stored, episodes still running, no group complete.
  expect(before.groups.every((group) => group.status === 'running')).toBe(true);
  expect(
    before.trajectories.some((trajectory) => trajectory.status === 'running' && trajectory.turnCount > 2),
  ).toBe(true);
  const second = await startEdge(target, 'edge-restarted', 4);
  expect(second.output()).toMatch(/resuming \d+ unfinished episode/);
  await expect
    .poll(async () => (await withApiGroups(second, groupIds)).every((status) => status === 'complete'), {
      timeout: 90_000,
      interval: 200,
    })
    .toBe(true);
  await stop(second);
  const after = await withStore(target, (store) => ledger(store, groupIds));
  const outcome = {
    lostTurns: lostTurns(before.turns, after.turns) + after.gaps,
    duplicates: after.duplicates,
    leaks:
      leftRunning(after) +
      after.heldLeases +
      children.filter((child) => child.exitCode === null && child.signalCode === null).length +
      (target.lockFile && existsSync(target.lockFile) ? 1 : 0),
  };
  recordFaultOutcome(context, outcome);
  expect(outcome).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
  // The double is a perfect agent: every episode, resumed or not, ends solved.
  expect(after.trajectories.map((trajectory) => [trajectory.status, trajectory.verifierReward])).toEqual(
    after.trajectories.map(() => ['finished', 1]),
  );
}

async function withApiGroups(edge: SpawnedEdge, groupIds: readonly string[]): Promise<string[]> {
  return Promise.all(
    groupIds.map(async (id) => (await api<GroupView>(edge, `/v1/groups/${id}`)).group.status),
  );
}

describe('an edge killed mid-rollout', () => {
  // The embedded pass runs this one and the server pass the next: the embedded store does not
  // depend on the server, so running it twice would only double the time.
  it.skipIf(testServerUrl !== undefined)(
    'on the embedded store: the restarted edge resumes every episode and every group completes',
    async (context) => {
      await killedAndRestarted(await embeddedTarget(), context);
    },
    240_000,
  );

  // Two processes on one store need a server: the embedded store is one process at a time.
  it.skipIf(!testServerUrl)(
    'on a Postgres server: the restarted edge resumes its own episodes at once and every group completes',
    async (context) => {
      await killedAndRestarted(await serverTarget(testServerUrl as string), context);
    },
    240_000,
  );
});

// Two live edges on one store need a Postgres server (the embedded store is one process at a time).
describe.skipIf(!testServerUrl)('two edges on one Postgres store, one killed', () => {
  it('keeps the live edge’s episodes with it while it beats, and its sweep takes the dead one’s over', async (context) => {
    const target = await serverTarget(testServerUrl as string);
    // Each policy call outlasts the 2 s lease: only the beats keep an episode with its runner.
    double.delayMs = 2500;
    const live = await startEdge(target, 'edge-live', 8);
    const doomed = await startEdge(target, 'edge-doomed', 4);
    const liveGroups = await startGroups(live, [3], 60);
    const doomedGroups = await startGroups(doomed, [2, 2], 70);
    await untilMidway(doomed, doomedGroups, 2);
    await kill(doomed);
    const allGroups = [...liveGroups, ...doomedGroups];
    const before = await withStore(target, (store) => ledger(store, allGroups));
    const orphans = before.trajectories.filter((trajectory) => trajectory.status === 'running');
    expect(orphans.some((trajectory) => doomedGroups.includes(trajectory.groupId as string))).toBe(true);
    double.delayMs = 200;
    await expect
      .poll(async () => (await withApiGroups(live, allGroups)).every((status) => status === 'complete'), {
        timeout: 120_000,
        interval: 250,
      })
      .toBe(true);
    await stop(live);
    const after = await withStore(target, (store) => ledger(store, allGroups));
    const ofGroups = (ids: readonly string[]) =>
      after.trajectories.filter((trajectory) => ids.includes(trajectory.groupId as string));
    // Never taken from the live edge: still its own, never resumed.
    expect(ofGroups(liveGroups).map((trajectory) => [trajectory.runner, trajectory.resumes])).toEqual(
      ofGroups(liveGroups).map(() => ['edge-live', 0]),
    );
    // What the dead edge left running, the live one took over once and finished.
    const orphanIds = new Set(
      orphans
        .filter((trajectory) => doomedGroups.includes(trajectory.groupId as string))
        .map((trajectory) => trajectory.id),
    );
    expect(
      after.trajectories
        .filter((trajectory) => orphanIds.has(trajectory.id))
        .map((trajectory) => [trajectory.runner, trajectory.resumes, trajectory.status]),
    ).toEqual([...orphanIds].map(() => ['edge-live', 1, 'finished']));
    const outcome = {
      lostTurns: lostTurns(before.turns, after.turns) + after.gaps,
      duplicates: after.duplicates,
      leaks:
        leftRunning(after) +
        after.heldLeases +
        children.filter((child) => child.exitCode === null && child.signalCode === null).length,
    };
    recordFaultOutcome(context, outcome);
    expect(outcome).toEqual({ lostTurns: 0, duplicates: 0, leaks: 0 });
  }, 300_000);
});
