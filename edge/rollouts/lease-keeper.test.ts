// The LeaseKeeper against a real store: a beat renews the episodes not renewed lately (in the
// database, by its clock), an episode taken over by another runner is reported lost and no longer
// beaten, and releaseAll hands every held episode back at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeGroup } from '../../test/support/fixtures.ts';
import { openTestStore, type TestStore } from '../../test/support/open-test-store.ts';
import { LeaseKeeper } from './lease-keeper.ts';

let testStore: TestStore;
beforeAll(async () => {
  testStore = await openTestStore();
});
afterAll(async () => {
  await testStore?.close();
});

async function expireAll(ids: readonly string[]): Promise<void> {
  await testStore.store.sql.query(
    `update trajectories set lease_expires_at = now() - interval '1 second' where id = any($1::uuid[])`,
    [ids],
  );
}

async function heldBy(ids: readonly string[]): Promise<(string | null)[]> {
  const { rows } = await testStore.store.sql.query(
    `select case when lease_expires_at > now() then runner end from trajectories
      where id = any($1::uuid[]) order by array_position($1::uuid[], id)`,
    [ids],
  );
  return rows.map((row) => row[0] as string | null);
}

describe('LeaseKeeper', () => {
  it('renews what it holds, reports an episode taken over, and hands the rest back on releaseAll', async () => {
    const { store } = testStore;
    // Rollout slots: only they are leased (docs/edge.md, "Who writes a trajectory").
    const { trajectories } = await makeGroup(store, { size: 3, writer: 'runner' });
    const ids = trajectories.map((trajectory) => trajectory.id) as [string, string, string];
    // The timer would tick only after an hour: the test beats by hand.
    const keeper = new LeaseKeeper({ store, leaseSeconds: 60, beatEveryMs: 3_600_000 });
    await store.claimTrajectories({ runner: 'k', leaseSeconds: 60, trajectoryIds: ids });
    const lost: string[] = [];
    for (const id of ids) keeper.hold(id, 'k', (reason) => lost.push(reason));
    await expireAll(ids);
    await store.claimTrajectory({ trajectoryId: ids[2], runner: 'thief', leaseSeconds: 60 });
    await keeper.beat({ all: true });
    expect(await heldBy(ids)).toEqual(['k', 'k', 'thief']);
    expect(lost).toEqual([`k lost its lease on trajectory ${ids[2]}: taken over or ended`]);
    expect(keeper.holds(ids[2])).toBe(false);
    keeper.letGo(ids[1]);
    await keeper.releaseAll();
    // ids[1] was let go (its run ended elsewhere), so it keeps its lease; ids[0] is handed back.
    expect(await heldBy(ids)).toEqual([null, 'k', 'thief']);
    expect(keeper.holds(ids[0])).toBe(false);
  });
});
