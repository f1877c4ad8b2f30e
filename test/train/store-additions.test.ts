// The store functions the trainer added (db/store/owner-leases.ts, training-cycle.ts,
// select-trajectories.ts): taking back a checkpoint's groups after a restart, releasing stray leases,
// the one-transaction commit of a cycle, and choosing trajectories by reward for SFT.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError } from '../../db/errors.ts';
import type { Store } from '../../db/store.ts';
import { reclaimGroups, releaseOwnerLeases } from '../../db/store/owner-leases.ts';
import { selectTrajectories } from '../../db/store/select-trajectories.ts';
import { commitTrainingCycle, recordPublishFailure } from '../../db/store/training-cycle.ts';
import { makeCompleteGroup, uniqueName } from '../support/fixtures.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

let testStore: TestStore;
let store: Store;

beforeAll(async () => {
  testStore = await openTestStore();
  store = testStore.store;
});
afterAll(async () => {
  await testStore?.close();
});

async function expired(groupId: string): Promise<void> {
  await store.sql.query(
    `update rollout_groups set lease_expires_at = now() - interval '1 second' where id = $1`,
    [groupId],
  );
}

async function policyWithVersion() {
  const policy = await store.createPolicy({ name: uniqueName('p'), baseModel: 'tiny' });
  const base = await store.registerPolicyVersion({ policyId: policy.id });
  await store.publishPolicyVersion({ versionId: base.id, makeDefault: true });
  const run = await store.startTrainingRun({ policyId: policy.id, baseVersionId: base.id });
  const next = await store.registerPolicyVersion({
    policyId: policy.id,
    parentVersionId: base.id,
    trainingRunId: run.id,
  });
  return { policy, base, run, next };
}

describe('reclaimGroups / releaseOwnerLeases', () => {
  it('takes back own, free and expired leases, and reports the rest as lost', async () => {
    const mine = await makeCompleteGroup(store, [1, 0]);
    const free = await makeCompleteGroup(store, [1, 0]);
    const stale = await makeCompleteGroup(store, [1, 0]);
    const taken = await makeCompleteGroup(store, [1, 0]);
    const done = await makeCompleteGroup(store, [1, 0]);
    await reclaimGroups(store.db, { owner: 'me', groupIds: [mine.group.id] });
    await reclaimGroups(store.db, { owner: 'other', groupIds: [stale.group.id, taken.group.id] });
    await expired(stale.group.id);
    await reclaimGroups(store.db, { owner: 'me', groupIds: [done.group.id] });
    await store.markGroupsTrained({ owner: 'me', groupIds: [done.group.id] });

    const ids = [mine, free, stale, taken, done].map((fixture) => fixture.group.id);
    const result = await reclaimGroups(store.db, { owner: 'me', groupIds: ids, leaseSeconds: 60 });
    expect(result.claimed.map((group) => group.id)).toEqual(ids.slice(0, 3));
    expect(result.claimed.every((group) => group.leaseOwner === 'me')).toBe(true);
    expect(result.lost).toEqual([
      { groupId: taken.group.id, why: 'is leased by other' },
      { groupId: done.group.id, why: 'is trained' },
    ]);
  });

  it('releases every lease of the owner except the kept ones', async () => {
    const a = await makeCompleteGroup(store, [1, 0]);
    const b = await makeCompleteGroup(store, [1, 0]);
    const other = await makeCompleteGroup(store, [1, 0]);
    const owner = uniqueName('trainer');
    await reclaimGroups(store.db, { owner, groupIds: [a.group.id, b.group.id] });
    await reclaimGroups(store.db, { owner: 'someone-else', groupIds: [other.group.id] });
    expect(await releaseOwnerLeases(store.db, { owner, except: [b.group.id] })).toEqual([a.group.id]);
    const after = await Promise.all(
      [a, b, other].map(async (fixture) => (await store.getGroup({ groupId: fixture.group.id })).group),
    );
    expect(after.map((group) => group.leaseOwner)).toEqual([null, owner, 'someone-else']);
    expect(await releaseOwnerLeases(store.db, { owner })).toEqual([b.group.id]);
  });
});

describe('commitTrainingCycle', () => {
  it('publishes the version, marks the groups trained with reasons and notes trajectories, in one go', async () => {
    const { policy, run, next } = await policyWithVersion();
    const used = await makeCompleteGroup(store, [1, 0]);
    const flat = await makeCompleteGroup(store, [1, 1]);
    const owner = uniqueName('trainer');
    await store.takePolicyLease({ policyId: policy.id, owner });
    await reclaimGroups(store.db, { owner, groupIds: [used.group.id, flat.group.id] });
    const trajectoryId = used.trajectories[0]?.id as string;
    const result = await commitTrainingCycle(store.db, {
      owner,
      versionId: next.id,
      adapterUri: '/adapters/x',
      makeDefault: true,
      trainingRunId: run.id,
      groupIds: [used.group.id, flat.group.id],
      groupReasons: { [flat.group.id]: 'no-signal' },
      trajectoryNotes: { [trajectoryId]: { training: { driftTokens: 3 } } },
    });
    expect(result.version?.status).toBe('published');
    expect(result.version?.adapterUri).toBe('/adapters/x');
    expect((await store.getDefaultVersion({ policyId: policy.id }))?.id).toBe(next.id);
    const groups = await Promise.all(
      [used, flat].map(async (fixture) => (await store.getGroup({ groupId: fixture.group.id })).group),
    );
    expect(
      groups.map((group) => [group.status, group.statusReason, group.trainingRunId, group.leaseOwner]),
    ).toEqual([
      ['trained', null, run.id, null],
      ['trained', 'no-signal', run.id, null],
    ]);
    const { trajectory } = await store.getTrajectory(trajectoryId);
    expect(trajectory.metadata).toMatchObject({ training: { driftTokens: 3 } });
  });

  it('changes nothing when a group is no longer held (lease lost)', async () => {
    const { policy, run, next } = await policyWithVersion();
    const held = await makeCompleteGroup(store, [1, 0]);
    const lost = await makeCompleteGroup(store, [1, 0]);
    await store.takePolicyLease({ policyId: policy.id, owner: 'a' });
    await reclaimGroups(store.db, { owner: 'a', groupIds: [held.group.id] });
    await reclaimGroups(store.db, { owner: 'b', groupIds: [lost.group.id] });
    const error = await commitTrainingCycle(store.db, {
      owner: 'a',
      versionId: next.id,
      makeDefault: true,
      trainingRunId: run.id,
      groupIds: [held.group.id, lost.group.id],
    }).catch((caught: unknown) => caught);
    expect(isStoreError(error, 'lease-lost')).toBe(true);
    const version = (await store.sql.query('select status from policy_versions where id = $1', [next.id]))
      .rows[0];
    expect(version?.[0]).toBe('training');
    expect((await store.getDefaultVersion({ policyId: policy.id }))?.id).not.toBe(next.id);
    expect((await store.getGroup({ groupId: held.group.id })).group.status).toBe('complete');
  });

  it('records why a publication failed, only on an unpublished version', async () => {
    const { next, base } = await policyWithVersion();
    const noted = await recordPublishFailure(store.db, { versionId: next.id, reason: 'probe failed: 500' });
    expect(noted.metadata).toMatchObject({ publishError: 'probe failed: 500' });
    const error = await recordPublishFailure(store.db, { versionId: base.id, reason: 'x' }).catch(
      (caught: unknown) => caught,
    );
    expect(isStoreError(error, 'conflict')).toBe(true);
  });
});

describe('selectTrajectories', () => {
  it('returns finished trajectories at or above the reward threshold, filtered by environment', async () => {
    const env = uniqueName('env').replace(/-/g, '_');
    const task = await store.upsertTask({ env, key: uniqueName('t'), input: {} });
    const group = await store.createGroup({ taskId: task.id, size: 4 });
    const rewards = [1, 0.5, 0.2, 1];
    const ids: string[] = [];
    for (const [slot, reward] of rewards.entries()) {
      const trajectory = await store.startTrajectory({ groupId: group.id });
      ids.push(trajectory.id);
      await store.finishTrajectory(
        slot === 3
          ? {
              trajectoryId: trajectory.id,
              status: 'truncated',
              verifierReward: reward,
              errorReason: 'max-turns',
            }
          : { trajectoryId: trajectory.id, status: 'finished', verifierReward: reward },
      );
    }
    const chosen = await selectTrajectories(store.db, { reward: 'verifier', minReward: 0.5, env });
    expect(chosen.map((row) => row.id).sort()).toEqual([ids[0], ids[1]].sort());
    const withTruncated = await selectTrajectories(store.db, {
      reward: 'verifier',
      minReward: 0.9,
      env,
      includeTruncated: true,
    });
    expect(withTruncated.map((row) => row.id).sort()).toEqual([ids[0], ids[3]].sort());
    // No final rewards were set: nothing qualifies on the final reward.
    expect(await selectTrajectories(store.db, { reward: 'final', minReward: 0, env })).toEqual([]);
  });
});
