// db/store/replay-trajectories.ts: which past successes a GRPO step replays (`edgerl train --replay`):
// one per trained training-split group of the policy, its best, at or above the threshold, never a
// group left out, in an order the salt fixes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../db/store.ts';
import { reclaimGroups } from '../../db/store/owner-leases.ts';
import { replayTrajectories } from '../../db/store/replay-trajectories.ts';
import type { TaskSplit } from '../../protocol/statuses.ts';
import { makeGroup, uniqueName } from '../support/fixtures.ts';
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

async function publishedPolicy() {
  const policy = await store.createPolicy({ name: uniqueName('p'), baseModel: 'tiny' });
  const version = await store.registerPolicyVersion({ policyId: policy.id });
  await store.publishPolicyVersion({ versionId: version.id, makeDefault: true });
  return { policy, version };
}

/** A group of `rewards.length` finished episodes with these final rewards, trained unless told not. */
async function group(
  versionId: string,
  rewards: readonly number[],
  options: { split?: TaskSplit; trained?: boolean } = {},
) {
  const fixture = await makeGroup(store, {
    size: rewards.length,
    policyVersionId: versionId,
    ...(options.split ? { split: options.split } : {}),
  });
  for (const trajectory of fixture.trajectories)
    await store.finishTrajectory({ trajectoryId: trajectory.id, status: 'finished', verifierReward: 0 });
  await store.setFinalRewards({
    rewards: fixture.trajectories.map((trajectory, slot) => ({
      trajectoryId: trajectory.id,
      finalReward: rewards[slot] as number,
    })),
  });
  if (options.trained ?? true) {
    await reclaimGroups(store.db, { owner: 'trainer', groupIds: [fixture.group.id] });
    await store.markGroupsTrained({ owner: 'trainer', groupIds: [fixture.group.id] });
  }
  return { groupId: fixture.group.id, ids: fixture.trajectories.map((trajectory) => trajectory.id) };
}

describe('replayTrajectories', () => {
  it("takes each trained training group's best success once, and nothing else", async () => {
    const { policy, version } = await publishedPolicy();
    const other = await publishedPolicy();
    const mixed = await group(version.id, [0, 1, 0.5, 1]);
    const allSolved = await group(version.id, [1, 1]);
    const failed = await group(version.id, [0, 0.5]);
    await group(version.id, [1, 1], { trained: false });
    await group(version.id, [1, 1], { split: 'validation' });
    await group(other.version.id, [1, 1]);

    const rows = await replayTrajectories(store.db, {
      policyId: policy.id,
      minReward: 1,
      limit: 100,
      salt: 'a',
    });
    // Ties go to the smaller id, so the choice inside a group is fixed too.
    const best = (ids: readonly string[]) => [...ids].sort()[0];
    expect(rows.map((row) => row.id).sort()).toEqual(
      [best([mixed.ids[1] as string, mixed.ids[3] as string]), best(allSolved.ids)].sort(),
    );
    expect(rows.every((row) => row.groupId !== failed.groupId)).toBe(true);
    // A lower threshold lets the half-solved group's best in.
    const lower = await replayTrajectories(store.db, {
      policyId: policy.id,
      minReward: 0.5,
      limit: 100,
      salt: 'a',
    });
    expect(lower.map((row) => row.id)).toContain(failed.ids[1]);
  });

  it('leaves out the given groups, keeps to the limit, and orders by the salt', async () => {
    const { policy, version } = await publishedPolicy();
    const groups = [];
    for (let index = 0; index < 12; index++) groups.push(await group(version.id, [1, 0]));
    const all = groups.map((fixture) => fixture.ids[0] as string);

    const excluded = groups.slice(0, 4).map((fixture) => fixture.groupId);
    const rest = await replayTrajectories(store.db, {
      policyId: policy.id,
      minReward: 1,
      limit: 100,
      salt: 's',
      excludeGroupIds: excluded,
    });
    expect(rest.map((row) => row.id).sort()).toEqual(all.slice(4).sort());

    const first = await replayTrajectories(store.db, {
      policyId: policy.id,
      minReward: 1,
      limit: 5,
      salt: 's',
    });
    const again = await replayTrajectories(store.db, {
      policyId: policy.id,
      minReward: 1,
      limit: 5,
      salt: 's',
    });
    expect(first).toHaveLength(5);
    expect(again.map((row) => row.id)).toEqual(first.map((row) => row.id));
    // Twelve rows in two salts' orders: the same five in the same order would be a 1-in-95,040 chance.
    const orders = await Promise.all(
      ['t', 'u', 'v'].map((salt) =>
        replayTrajectories(store.db, { policyId: policy.id, minReward: 1, limit: 5, salt }),
      ),
    );
    expect(
      orders.some((rows) => rows.map((row) => row.id).join() !== first.map((row) => row.id).join()),
    ).toBe(true);
  });
});
