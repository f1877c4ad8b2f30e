// Group lifecycle: completion when the last trajectory ends, judge scores, final rewards, and claiming
// under a lease (skip-locked claims, expiry, renewal, release, marking trained) — all-or-nothing writes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError, type StoreError } from '../../db/errors.ts';
import { openStore } from '../../db/drivers/open-store.ts';
import type { Store } from '../../db/store.ts';
import { makeCompleteGroup, makeGroup } from '../support/fixtures.ts';
import { openTestStore, type TestStore, testServerUrl } from '../support/open-test-store.ts';

let testStore: TestStore;
let store: Store;

beforeAll(async () => {
  testStore = await openTestStore();
  store = testStore.store;
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

async function count(sql: string, params: unknown[]): Promise<number> {
  return Number((await store.sql.query(sql, params)).rows[0]?.[0]);
}

/** Claims everything claimable so earlier tests' groups do not leak into a later test's claims. */
async function drainClaims(): Promise<void> {
  while ((await store.claimGroups({ owner: 'drain', limit: 100, leaseSeconds: 3600 })).length > 0);
}

describe('group completion', () => {
  it('completes the group when its last trajectory ends, whatever the outcome', async () => {
    const { group, trajectories } = await makeGroup(store, { size: 3 });
    const [a, b, c] = trajectories.map((trajectory) => trajectory.id) as [string, string, string];
    expect(
      (await store.finishTrajectory({ trajectoryId: a, status: 'finished', verifierReward: 1 }))
        .groupCompleted,
    ).toBe(false);
    expect(
      (await store.finishTrajectory({ trajectoryId: b, status: 'truncated', errorReason: 'max-turns' }))
        .groupCompleted,
    ).toBe(false);
    expect((await store.getGroup({ groupId: group.id })).group.status).toBe('running');
    expect(
      (await store.finishTrajectory({ trajectoryId: c, status: 'error', errorReason: 'policy-timeout' }))
        .groupCompleted,
    ).toBe(true);
    const { group: after } = await store.getGroup({ groupId: group.id });
    expect(after.status).toBe('complete');
    expect(after.completedAt).toBeInstanceOf(Date);
  });

  it('completes a group exactly once when its trajectories finish concurrently', async () => {
    const { group, trajectories } = await makeGroup(store, { size: 4 });
    const results = await Promise.all(
      trajectories.map((trajectory) =>
        store.finishTrajectory({ trajectoryId: trajectory.id, status: 'finished' }),
      ),
    );
    expect(results.filter((result) => result.groupCompleted)).toHaveLength(1);
    expect((await store.getGroup({ groupId: group.id })).group.status).toBe('complete');
  });

  it('refuses a trajectory beyond the group size, and one after the group completed', async () => {
    const { group } = await makeGroup(store, { size: 1 });
    const full = await rejection(store.startTrajectory({ groupId: group.id }));
    expect(full.code).toBe('conflict');
    expect(full.message).toContain('full');
  });

  it('returns the stored trajectory when a start with a caller-chosen id is retried', async () => {
    const { group } = await makeGroup(store, { size: 2, started: 0 });
    const id = randomUUID();
    const starts = await Promise.all([1, 2, 3].map(() => store.startTrajectory({ id, groupId: group.id })));
    expect(starts.map((trajectory) => trajectory.id)).toEqual([id, id, id]);
    // The retries took no slot: the group still has room for one more.
    expect((await store.getGroup({ groupId: group.id })).trajectories).toHaveLength(1);
    await store.startTrajectory({ groupId: group.id });
    const reused = await rejection(store.startTrajectory({ id, env: 'another-env' }));
    expect(reused.code).toBe('conflict');
  });

  it('makes a repeated finish a no-op and a different one an error', async () => {
    const { trajectories } = await makeGroup(store, { size: 2 });
    const id = trajectories[0]?.id ?? '';
    await store.finishTrajectory({ trajectoryId: id, status: 'finished', verifierReward: 0.5 });
    const again = await store.finishTrajectory({ trajectoryId: id, status: 'finished', verifierReward: 0.5 });
    expect(again.trajectory.verifierReward).toBe(0.5);
    const changed = await rejection(
      store.finishTrajectory({ trajectoryId: id, status: 'finished', verifierReward: 1 }),
    );
    expect(changed.code).toBe('trajectory-closed');
  });

  it('rejects a bad finish with the field named and changes nothing', async () => {
    const { trajectories } = await makeGroup(store, { size: 1 });
    const id = trajectories[0]?.id ?? '';
    const error = await rejection(store.finishTrajectory({ trajectoryId: id, status: 'error' }));
    expect(error.code).toBe('validation');
    expect(error.message).toContain('errorReason');
    expect((await store.getTrajectory(id)).trajectory.status).toBe('running');
  });

  it('ends a group short of its size explicitly, only once nothing runs', async () => {
    const { group, trajectories } = await makeGroup(store, { size: 4, started: 2 });
    const early = await rejection(store.markGroupComplete(group.id));
    expect(early.code).toBe('conflict');
    for (const trajectory of trajectories)
      await store.finishTrajectory({ trajectoryId: trajectory.id, status: 'finished' });
    expect((await store.markGroupComplete(group.id)).status).toBe('complete');
  });
});

describe('judge scores and rewards', () => {
  it('records one row per trajectory, sets judge_score and marks the group scored', async () => {
    const { group, trajectories } = await makeCompleteGroup(store, [1, 0]);
    const [a, b] = trajectories.map((trajectory) => trajectory.id) as [string, string];
    const scored = await store.recordJudgeScores({
      groupId: group.id,
      judgeModel: 'judge-double',
      rubricHash: 'r1',
      scores: [
        {
          trajectoryId: a,
          score: 0.9,
          explanation: 'right',
          promptTokens: 100,
          completionTokens: 20,
          costUsd: 0.001,
        },
        { trajectoryId: b, score: 0.2, explanation: 'wrong' },
      ],
    });
    expect(scored.status).toBe('scored');
    const { trajectories: after } = await store.getGroup({ groupId: group.id });
    expect(after.map((trajectory) => [trajectory.id, trajectory.judgeScore])).toEqual(
      expect.arrayContaining([
        [a, 0.9],
        [b, 0.2],
      ]),
    );
    expect(await count('select count(*) from judge_scores where trajectory_id in ($1, $2)', [a, b])).toBe(2);
  });

  it('writes nothing when one score names a trajectory outside the group', async () => {
    const { group, trajectories } = await makeCompleteGroup(store, [1, 0]);
    const other = await makeCompleteGroup(store, [1]);
    const error = await rejection(
      store.recordJudgeScores({
        groupId: group.id,
        judgeModel: 'judge-double',
        rubricHash: 'r1',
        scores: [
          { trajectoryId: trajectories[0]?.id ?? '', score: 1 },
          { trajectoryId: other.trajectories[0]?.id ?? '', score: 0 },
        ],
      }),
    );
    expect(error.code).toBe('validation');
    expect(error.message).toContain('scores.1.trajectoryId');
    expect(
      await count('select count(*) from judge_scores where trajectory_id = $1', [trajectories[0]?.id]),
    ).toBe(0);
    const { group: after, trajectories: members } = await store.getGroup({ groupId: group.id });
    expect(after.status).toBe('complete');
    expect(members.every((member) => member.judgeScore === null)).toBe(true);
  });

  it('marks a group unscored with its reason, and refuses to score a running group', async () => {
    const complete = await makeCompleteGroup(store, [1]);
    const unscored = await store.markGroupUnscored({
      groupId: complete.group.id,
      reason: 'judge: 3 retries failed',
    });
    expect(unscored).toMatchObject({ status: 'unscored', statusReason: 'judge: 3 retries failed' });
    const running = await makeGroup(store, { size: 1 });
    const error = await rejection(
      store.recordJudgeScores({
        groupId: running.group.id,
        judgeModel: 'j',
        rubricHash: 'r',
        scores: [{ trajectoryId: running.trajectories[0]?.id ?? '', score: 1 }],
      }),
    );
    expect(error.code).toBe('conflict');
  });

  it('sets final rewards all or none', async () => {
    const { trajectories } = await makeCompleteGroup(store, [1, 0]);
    const [a, b] = trajectories.map((trajectory) => trajectory.id) as [string, string];
    const error = await rejection(
      store.setFinalRewards({
        rewards: [
          { trajectoryId: a, finalReward: 1 },
          { trajectoryId: '00000000-0000-4000-8000-000000000000', finalReward: 0 },
        ],
      }),
    );
    expect(error.code).toBe('not-found');
    expect((await store.getTrajectory(a)).trajectory.finalReward).toBeNull();
    await store.setFinalRewards({
      rewards: [
        { trajectoryId: a, finalReward: 1 },
        { trajectoryId: b, finalReward: -1 },
      ],
    });
    expect((await store.getTrajectory(b)).trajectory.finalReward).toBe(-1);
  });
});

describe('claiming groups', () => {
  it('claims complete and scored groups oldest first, never running or claimed ones', async () => {
    await drainClaims();
    await makeGroup(store, { size: 1 });
    const first = await makeCompleteGroup(store, [1]);
    const second = await makeCompleteGroup(store, [0]);
    // What a continuous trainer polls: the same groups, counted without taking them.
    expect(await store.countClaimableGroups()).toBe(2);
    const claimed = await store.claimGroups({ owner: 'trainer-a', limit: 10, leaseSeconds: 60 });
    expect(claimed.map((group) => group.id)).toEqual([first.group.id, second.group.id]);
    expect(claimed.every((group) => group.leaseOwner === 'trainer-a' && group.leaseExpiresAt !== null)).toBe(
      true,
    );
    expect(await store.claimGroups({ owner: 'trainer-b', limit: 10 })).toEqual([]);
    expect(await store.countClaimableGroups()).toBe(0);
  });

  it('makes a group claimable again once its lease expires', async () => {
    await drainClaims();
    const { group } = await makeCompleteGroup(store, [1]);
    const [claimed] = await store.claimGroups({ owner: 'crashing-trainer', leaseSeconds: 0.2 });
    expect(claimed?.id).toBe(group.id);
    expect(await store.claimGroups({ owner: 'trainer-b' })).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const [reclaimed] = await store.claimGroups({ owner: 'trainer-b', leaseSeconds: 60 });
    expect(reclaimed).toMatchObject({ id: group.id, leaseOwner: 'trainer-b' });
    // The crashed trainer has lost it: renewing and marking trained are refused.
    expect(
      (await rejection(store.renewLease({ owner: 'crashing-trainer', groupIds: [group.id] }))).code,
    ).toBe('lease-lost');
    expect(
      (await rejection(store.markGroupsTrained({ owner: 'crashing-trainer', groupIds: [group.id] }))).code,
    ).toBe('lease-lost');
  });

  it('renews and releases only the caller’s leases', async () => {
    await drainClaims();
    const { group } = await makeCompleteGroup(store, [1]);
    const [claimed] = await store.claimGroups({ owner: 'trainer-a', leaseSeconds: 30 });
    const renewedUntil = await store.renewLease({
      owner: 'trainer-a',
      groupIds: [group.id],
      leaseSeconds: 3600,
    });
    expect(renewedUntil.getTime()).toBeGreaterThan(
      claimed?.leaseExpiresAt?.getTime() ?? Number.POSITIVE_INFINITY,
    );
    expect(await store.releaseGroups({ owner: 'trainer-b', groupIds: [group.id] })).toEqual([]);
    expect(await store.releaseGroups({ owner: 'trainer-a', groupIds: [group.id] })).toEqual([group.id]);
    const [again] = await store.claimGroups({ owner: 'trainer-b' });
    expect(again?.id).toBe(group.id);
  });

  it('marks groups trained all or none, clearing the lease and recording the run', async () => {
    await drainClaims();
    const policy = await store.createPolicy({ name: `p${Date.now()}`, baseModel: 'tiny' });
    const run = await store.startTrainingRun({ policyId: policy.id });
    const held = await makeCompleteGroup(store, [1, 0]);
    const notHeld = await makeCompleteGroup(store, [0, 1]);
    await store.claimGroups({ owner: 'trainer-a', limit: 1 });
    const error = await rejection(
      store.markGroupsTrained({
        owner: 'trainer-a',
        groupIds: [held.group.id, notHeld.group.id],
        trainingRunId: run.id,
      }),
    );
    expect(error.code).toBe('lease-lost');
    expect((await store.getGroup({ groupId: held.group.id })).group.status).toBe('complete');
    const trained = await store.markGroupsTrained({
      owner: 'trainer-a',
      groupIds: [held.group.id],
      trainingRunId: run.id,
    });
    expect(trained[0]).toMatchObject({
      status: 'trained',
      leaseOwner: null,
      leaseExpiresAt: null,
      trainingRunId: run.id,
    });
    const [next] = await store.claimGroups({ owner: 'trainer-a', limit: 10 });
    expect(next?.id).toBe(notHeld.group.id);
  });

  it('filters claims by status and policy', async () => {
    await drainClaims();
    const policy = await store.createPolicy({ name: `filter${Date.now()}`, baseModel: 'tiny' });
    const version = await store.registerPolicyVersion({ policyId: policy.id });
    const mine = await makeGroup(store, { size: 1, policyVersionId: version.id });
    await store.finishTrajectory({ trajectoryId: mine.trajectories[0]?.id ?? '', status: 'finished' });
    await makeCompleteGroup(store, [1]);
    expect(await store.claimGroups({ owner: 'x', statuses: ['scored'], limit: 10 })).toEqual([]);
    const claimed = await store.claimGroups({ owner: 'x', policyId: policy.id, limit: 10 });
    expect(claimed.map((group) => group.id)).toEqual([mine.group.id]);
  });

  it('filters claims by task split: held-out groups stay unclaimed for the trainer', async () => {
    await drainClaims();
    const train = await makeGroup(store, { size: 1, split: 'train' });
    const validation = await makeGroup(store, { size: 1, split: 'validation' });
    const held = await makeGroup(store, { size: 1, split: 'eval' });
    for (const fixture of [train, validation, held])
      await store.finishTrajectory({ trajectoryId: fixture.trajectories[0]?.id ?? '', status: 'finished' });
    const claimed = await store.claimGroups({ owner: 'split-trainer', splits: ['train'], limit: 10 });
    expect(claimed.map((group) => group.id)).toEqual([train.group.id]);
    // Without the filter every split is claimable: the two held-out groups are still free.
    const rest = await store.claimGroups({ owner: 'split-other', limit: 10 });
    expect(rest.map((group) => group.id).sort()).toEqual([validation.group.id, held.group.id].sort());
  });

  it('rejects a bad claim with the field named', async () => {
    const error = await rejection(store.claimGroups({ owner: '', limit: 0 }));
    expect(error.code).toBe('validation');
    expect(error.message).toContain('owner');
    expect(error.message).toContain('limit');
  });
});

// Real row locks need a real server: PGlite is one backend that runs one transaction at a time, so it
// cannot show two claimers overlapping. Runs when EDGERL_TEST_DATABASE_URL names a server (CI's second run).
describe.runIf(testServerUrl)('concurrent claimers on a Postgres server', () => {
  it('never hands the same group to two trainers', async () => {
    await drainClaims();
    const groups = await Promise.all(
      Array.from({ length: 24 }, (_, slot) => makeCompleteGroup(store, [slot % 2])),
    );
    const expected = new Set(groups.map((fixture) => fixture.group.id));
    // Four trainers, each with its own pool (separate connections), claiming in small batches at once.
    const trainers = await Promise.all(
      Array.from({ length: 4 }, () =>
        openStore({ url: testStore.url, migrations: 'skip', maxConnections: 2 }),
      ),
    );
    try {
      const claims = await Promise.all(
        trainers.map(async (trainer, index) => {
          const mine: string[] = [];
          for (;;) {
            const batch = await trainer.claimGroups({
              owner: `trainer-${index}`,
              limit: 3,
              leaseSeconds: 60,
            });
            if (batch.length === 0) return mine;
            mine.push(...batch.map((group) => group.id));
          }
        }),
      );
      const all = claims.flat();
      expect(new Set(all).size).toBe(all.length); // no group claimed twice
      expect(new Set(all)).toEqual(expected); // and every group claimed once
    } finally {
      await Promise.all(trainers.map((trainer) => trainer.close()));
    }
  });
});
