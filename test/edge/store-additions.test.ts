// Two store queries the edge added (db/store/get-policy-version.ts, turns-after.ts), on the embedded
// store or a server database. Which unfinished rollouts an edge resumes is the sweep's
// (test/store/trajectory-leases.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPolicyVersion } from '../../db/store/get-policy-version.ts';
import { turnsAfter } from '../../db/store/turns-after.ts';
import { assistantTurn, makeGroup, uniqueName, userTurn } from '../support/fixtures.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

let t: TestStore;
beforeAll(async () => {
  t = await openTestStore();
});
afterAll(async () => {
  await t?.close();
});

describe('getPolicyVersion', () => {
  it('reads a version by id and names a missing one', async () => {
    const policy = await t.store.createPolicy({ name: uniqueName('p'), baseModel: 'tiny' });
    const version = await t.store.registerPolicyVersion({ policyId: policy.id });
    expect(await getPolicyVersion(t.store.db, version.id)).toEqual(version);
    await expect(getPolicyVersion(t.store.db, '00000000-0000-4000-8000-000000000000')).rejects.toThrow(
      /policy version 00000000-0000-4000-8000-000000000000 does not exist/,
    );
    await expect(getPolicyVersion(t.store.db, 'v1')).rejects.toMatchObject({ code: 'validation' });
  });
});

describe('turnsAfter', () => {
  it('returns the trajectory and only the turns after the index, in order, up to the limit', async () => {
    const { trajectories } = await makeGroup(t.store, { size: 1 });
    const id = (trajectories[0] as { id: string }).id;
    await t.store.appendTurn(userTurn(id, 0));
    await t.store.appendTurn(assistantTurn(id, 1));
    await t.store.appendTurn(userTurn(id, 2, 'And 3 + 3?'));
    const all = await turnsAfter(t.store.db, { trajectoryId: id, afterIndex: -1 });
    expect(all.trajectory.id).toBe(id);
    expect(all.turns.map((turn) => turn.index)).toEqual([0, 1, 2]);
    expect(
      (await turnsAfter(t.store.db, { trajectoryId: id, afterIndex: 1 })).turns.map((turn) => turn.content),
    ).toEqual(['And 3 + 3?']);
    expect((await turnsAfter(t.store.db, { trajectoryId: id, afterIndex: -1, limit: 2 })).turns).toHaveLength(
      2,
    );
    expect((await turnsAfter(t.store.db, { trajectoryId: id, afterIndex: 2 })).turns).toEqual([]);
    await expect(
      turnsAfter(t.store.db, { trajectoryId: '00000000-0000-4000-8000-000000000000', afterIndex: -1 }),
    ).rejects.toMatchObject({ code: 'not-found' });
  });
});
