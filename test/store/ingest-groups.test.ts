// Recorded episodes that form a group (an episode's `group`: the uploader's key and the group's size):
// the group is made by the first upload naming it and joined by later ones, complete (claimable for
// training) once its size is reached, never overfilled (refused with nothing of the call written, also
// when two uploads race), retried uploads are no-ops, and episodes that disagree with the group are
// refused naming the field. Recorded times are stored when given.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError, type StoreError } from '../../db/errors.ts';
import type { IngestEpisodeInput, Store } from '../../db/store.ts';
import { uniqueName } from '../support/fixtures.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

let testStore: TestStore;
let store: Store;
let taskId: string;

beforeAll(async () => {
  testStore = await openTestStore();
  store = testStore.store;
  taskId = (await store.upsertTask({ env: 'recorded', key: uniqueName('task'), input: { q: 'Lyon?' } })).id;
});
afterAll(async () => {
  await testStore?.close();
});

async function rejection(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isStoreError(error)) throw new Error(`expected a StoreError, got ${String(error)}`);
  return error;
}

function sample(
  group: { key: string; size: number },
  reward: number,
  overrides: Partial<IngestEpisodeInput> = {},
) {
  return {
    key: uniqueName('sample'),
    taskId,
    group,
    verifierReward: reward,
    turns: [
      { role: 'user' as const, content: 'Where is Lyon?' },
      { role: 'assistant' as const, content: reward > 0 ? 'France.' : 'Spain.', completionTokenIds: [7] },
    ],
    ...overrides,
  } satisfies IngestEpisodeInput;
}

async function groupOf(groupId: string) {
  return store.getGroup({ groupId });
}

describe('ingested groups', () => {
  it('makes a group from the first upload, completes it with the last, and a trainer can claim it', async () => {
    const group = { key: uniqueName('group'), size: 3 };
    const first = await store.ingestTrajectories({ episodes: [sample(group, 1), sample(group, 0)] });
    expect(first.groups).toEqual([
      { key: group.key, groupId: expect.any(String), members: 2, size: 3, complete: false },
    ]);
    const groupId = first.groups?.[0]?.groupId as string;
    expect((await groupOf(groupId)).group).toMatchObject({
      status: 'running',
      endedCount: 2,
      taskId,
      size: 3,
    });
    const last = await store.ingestTrajectories({ episodes: [sample(group, 1)] });
    expect(last.groups).toEqual([{ key: group.key, groupId, members: 3, size: 3, complete: true }]);
    const { group: stored, trajectories } = await groupOf(groupId);
    expect(stored).toMatchObject({ status: 'complete', endedCount: 3, ingestKey: group.key });
    expect(stored.completedAt).toBeInstanceOf(Date);
    expect(trajectories.map((trajectory) => trajectory.verifierReward).sort()).toEqual([0, 1, 1]);
    const claimed = await store.claimGroups({ owner: uniqueName('trainer'), limit: 100 });
    expect(claimed.map((claim) => claim.id)).toContain(groupId);
  });

  it('treats a retried upload as a no-op, and refuses one that would overfill the group', async () => {
    const group = { key: uniqueName('group'), size: 2 };
    const episodes = [sample(group, 1), sample(group, 0)];
    const first = await store.ingestTrajectories({ episodes });
    const retry = await store.ingestTrajectories({ episodes });
    expect(retry).toMatchObject({ createdTrajectories: 0, groups: [{ members: 2, complete: true }] });
    const groupId = first.groups?.[0]?.groupId as string;
    const extra = sample(group, 1);
    const overfilled = await rejection(store.ingestTrajectories({ episodes: [extra] }));
    expect(overfilled.code).toBe('conflict');
    expect(overfilled.issues[0]?.path).toEqual(['episodes', 0, 'group']);
    expect((await groupOf(groupId)).trajectories).toHaveLength(2);
    const missing = await store.sql.query('select count(*) from trajectories where ingest_key = $1', [
      extra.key,
    ]);
    expect(Number(missing.rows[0]?.[0])).toBe(0);
  });

  it('never overfills a group when uploads race for its last place', async () => {
    for (let round = 0; round < 10; round++) {
      const group = { key: uniqueName('group'), size: 3 };
      const seeded = await store.ingestTrajectories({ episodes: [sample(group, 1), sample(group, 0)] });
      const groupId = seeded.groups?.[0]?.groupId as string;
      const outcomes = await Promise.allSettled(
        [1, 0, 1].map((reward) => store.ingestTrajectories({ episodes: [sample(group, reward)] })),
      );
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      for (const outcome of outcomes.filter((outcome) => outcome.status === 'rejected'))
        expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: 'conflict' });
      const { group: stored, trajectories } = await groupOf(groupId);
      expect(trajectories).toHaveLength(3);
      expect(stored).toMatchObject({ status: 'complete', endedCount: 3 });
    }
  });

  it('refuses episodes that disagree with their group, naming the field, and writes nothing', async () => {
    const group = { key: uniqueName('group'), size: 2 };
    const other = (await store.upsertTask({ env: 'recorded', key: uniqueName('task'), input: { q: 2 } })).id;
    const cases: [IngestEpisodeInput[], string, string][] = [
      [[sample(group, 1), sample({ ...group, size: 3 }, 0)], 'validation', 'group'],
      [[sample(group, 1), sample(group, 0, { taskId: other })], 'validation', 'taskId'],
      [[sample(group, 1, { key: undefined })], 'validation', 'key'],
      [[sample(group, 1, { taskId: undefined, env: 'recorded' })], 'validation', 'taskId'],
    ];
    for (const [episodes, code, field] of cases) {
      const error = await rejection(store.ingestTrajectories({ episodes }));
      expect(error.code, field).toBe(code);
      expect(error.issues.map((issue) => issue.path.at(-1))).toContain(field);
    }
    await store.ingestTrajectories({ episodes: [sample(group, 1)] });
    const stored = await rejection(
      store.ingestTrajectories({ episodes: [sample(group, 0, { taskId: other })] }),
    );
    expect(stored).toMatchObject({ code: 'conflict' });
    expect(stored.message).toContain(`group "${group.key}" is stored for task ${taskId}`);
    const groups = await store.sql.query('select count(*) from rollout_groups where ingest_key = $1', [
      group.key,
    ]);
    expect(Number(groups.rows[0]?.[0])).toBe(1);
  });

  it('stores the times an episode was recorded at, and compares them on a retry', async () => {
    const key = uniqueName('timed');
    const timed = {
      key,
      env: 'recorded',
      startedAt: '2025-01-31T12:00:00.250Z',
      finishedAt: '2025-01-31T13:30:00+01:00',
      turns: [{ role: 'user' as const, content: 'hi' }],
    };
    const result = await store.ingestTrajectories({ episodes: [timed] });
    const { trajectory } = await store.getTrajectory(result.trajectories[0]?.trajectoryId as string);
    expect(trajectory.startedAt.toISOString()).toBe('2025-01-31T12:00:00.250Z');
    expect(trajectory.finishedAt?.toISOString()).toBe('2025-01-31T12:30:00.000Z');
    expect((await store.ingestTrajectories({ episodes: [timed] })).createdTrajectories).toBe(0);
    const moved = await rejection(
      store.ingestTrajectories({ episodes: [{ ...timed, startedAt: '2025-01-31T12:00:01Z' }] }),
    );
    expect(moved.message).toContain('different startedAt');
    const backwards = await rejection(
      store.ingestTrajectories({
        episodes: [{ ...timed, key: uniqueName('t'), finishedAt: '2025-01-30T00:00:00Z' }],
      }),
    );
    expect(backwards.issues[0]?.path).toEqual(['episodes', 0, 'finishedAt']);
  });
});
