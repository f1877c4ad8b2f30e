// The `version_split_rewards` view and the store's read of it (db/store/version-split-rewards.ts):
// per version and split, ended episodes, rewarded ones, errors and the mean verifier reward, computed
// here by hand from the rewards the fixtures write.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../db/store.ts';
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

/** One group on a task of `split`, served by `versionId`, its episodes ended with these outcomes. */
async function episodes(
  versionId: string,
  split: TaskSplit,
  outcomes: readonly (number | 'error' | 'running')[],
  env = 'test-env',
): Promise<void> {
  const fixture = await makeGroup(store, { size: outcomes.length, split, policyVersionId: versionId, env });
  for (const [slot, outcome] of outcomes.entries()) {
    const trajectoryId = fixture.trajectories[slot]?.id ?? '';
    if (outcome === 'running') continue;
    await store.finishTrajectory(
      outcome === 'error'
        ? { trajectoryId, status: 'error', errorReason: 'inference down' }
        : { trajectoryId, status: 'finished', verifierReward: outcome },
    );
  }
}

describe('versionSplitRewards', () => {
  it('aggregates ended episodes per version of the split asked for', async () => {
    const policy = await store.createPolicy({ name: uniqueName('val'), baseModel: 'tiny' });
    const v1 = await store.registerPolicyVersion({ policyId: policy.id });
    const v2 = await store.registerPolicyVersion({ policyId: policy.id });
    const v3 = await store.registerPolicyVersion({ policyId: policy.id });
    await episodes(v1.id, 'validation', [1, 0, 0, 1]);
    await episodes(v1.id, 'validation', [1, 'error']);
    await episodes(v2.id, 'validation', [0, 0, 1, 'running']);
    // Other splits and other environments stay out of the validation rows (asked per env).
    await episodes(v2.id, 'train', [1, 1, 1, 1]);
    await episodes(v2.id, 'eval', [1, 1]);
    await episodes(v3.id, 'validation', [1, 1], 'other-env');

    const rows = await store.versionSplitRewards({
      policyId: policy.id,
      split: 'validation',
      env: 'test-env',
    });
    expect(rows).toEqual([
      // v1: 6 ended, 5 rewarded (one error), 3 of them 1 → 0.6.
      {
        policyVersionId: v1.id,
        version: v1.version,
        adapterName: v1.adapterName,
        episodes: 6,
        rewarded: 5,
        errors: 1,
        meanReward: 0.6,
      },
      // v2: the running episode is not counted; 1 of 3.
      {
        policyVersionId: v2.id,
        version: v2.version,
        adapterName: v2.adapterName,
        episodes: 3,
        rewarded: 3,
        errors: 0,
        meanReward: 1 / 3,
      },
    ]);
    const pooled = await store.versionSplitRewards({ policyId: policy.id });
    expect(pooled.map((row) => [row.version, row.episodes])).toEqual([
      [v1.version, 6],
      [v2.version, 3],
      [v3.version, 2],
    ]);
    const train = await store.versionSplitRewards({ policyId: policy.id, split: 'train' });
    expect(train.map((row) => [row.version, row.meanReward])).toEqual([[v2.version, 1]]);
  });

  it('reads as the view a user queries', async () => {
    const result = await store.sql.query(
      "select split, sum(trajectory_count)::integer from version_split_rewards where env = 'test-env' group by split order by split",
    );
    expect(result.rows.map((row) => [...row])).toEqual([
      ['eval', 2],
      ['train', 4],
      ['validation', 9],
    ]);
  });

  it('refuses an unknown split, naming the field', async () => {
    await expect(
      store.versionSplitRewards({
        policyId: '00000000-0000-0000-0000-000000000000',
        split: 'test' as TaskSplit,
      }),
    ).rejects.toThrow(/split/);
  });
});
