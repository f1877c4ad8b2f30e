// The policy lease (db/store/policy-leases.ts): one holder at a time, even when two take it at once;
// taken over only after expiry; renewal and release only by the holder; a commit that publishes needs
// it; taking it ends the runs a crashed trainer left `running` as `interrupted`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError } from '../../db/errors.ts';
import type { Store } from '../../db/store.ts';
import { uniqueName } from '../support/fixtures.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

let testStore: TestStore;
let store: Store;

beforeAll(async () => {
  testStore = await openTestStore({ maxConnections: 4 });
  store = testStore.store;
});
afterAll(async () => {
  await testStore?.close();
});

async function newPolicy() {
  const policy = await store.createPolicy({ name: uniqueName('p'), baseModel: 'tiny' });
  const base = await store.registerPolicyVersion({ policyId: policy.id });
  await store.publishPolicyVersion({ versionId: base.id, makeDefault: true });
  return { policy, base };
}

async function expire(policyId: string): Promise<void> {
  await store.sql.query(
    `update policy_leases set expires_at = now() - interval '1 second' where policy_id = $1`,
    [policyId],
  );
}

async function expectCode(work: Promise<unknown>, code: string): Promise<void> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(isStoreError(error) ? error.code : error).toBe(code);
}

describe('policy lease', () => {
  it('has one holder when two trainers take it at once, and leaves other policies alone', async () => {
    const { policy } = await newPolicy();
    const other = await newPolicy();
    const takes = await Promise.all(
      ['a', 'b', 'c', 'd'].map((owner) =>
        store.takePolicyLease({ policyId: policy.id, owner, leaseSeconds: 60 }),
      ),
    );
    const winners = takes.filter((take) => take.taken);
    expect(winners).toHaveLength(1);
    const holder = winners[0]?.taken ? winners[0].lease.owner : '';
    for (const take of takes) if (!take.taken) expect(take.holder).toBe(holder);
    const elsewhere = await store.takePolicyLease({
      policyId: other.policy.id,
      owner: 'z',
      leaseSeconds: 60,
    });
    expect(elsewhere.taken).toBe(true);
  });

  it('is taken over only after it expires; renewal and release belong to the holder', async () => {
    const { policy } = await newPolicy();
    expect((await store.takePolicyLease({ policyId: policy.id, owner: 'a', leaseSeconds: 60 })).taken).toBe(
      true,
    );
    expect((await store.takePolicyLease({ policyId: policy.id, owner: 'a', leaseSeconds: 60 })).taken).toBe(
      true,
    );
    expect((await store.takePolicyLease({ policyId: policy.id, owner: 'b', leaseSeconds: 60 })).taken).toBe(
      false,
    );
    await expectCode(store.renewPolicyLease({ policyId: policy.id, owner: 'b' }), 'policy-lease-lost');
    expect(await store.releasePolicyLease({ policyId: policy.id, owner: 'b' })).toBe(false);
    await expire(policy.id);
    expect((await store.takePolicyLease({ policyId: policy.id, owner: 'b', leaseSeconds: 60 })).taken).toBe(
      true,
    );
    await expectCode(store.renewPolicyLease({ policyId: policy.id, owner: 'a' }), 'policy-lease-lost');
    expect(await store.renewPolicyLease({ policyId: policy.id, owner: 'b' })).toBeInstanceOf(Date);
    expect(await store.releasePolicyLease({ policyId: policy.id, owner: 'b' })).toBe(true);
    expect((await store.takePolicyLease({ policyId: policy.id, owner: 'c', leaseSeconds: 60 })).taken).toBe(
      true,
    );
  });

  it('marks the runs left running interrupted on take, except the ones the taker carries on', async () => {
    const { policy, base } = await newPolicy();
    const orphan = await store.startTrainingRun({ policyId: policy.id, baseVersionId: base.id });
    const carried = await store.startTrainingRun({ policyId: policy.id, baseVersionId: base.id });
    const done = await store.startTrainingRun({ policyId: policy.id, baseVersionId: base.id });
    await store.finishTrainingRun({ trainingRunId: done.id, status: 'finished' });
    const take = await store.takePolicyLease({ policyId: policy.id, owner: 'a', keepRunIds: [carried.id] });
    expect(take.taken && take.interruptedRunIds).toEqual([orphan.id]);
    const rows = await store.sql.query('select id, status from training_runs where policy_id = $1', [
      policy.id,
    ]);
    const status = Object.fromEntries(rows.rows.map((row) => [String(row[0]), String(row[1])]));
    expect(status).toEqual({ [orphan.id]: 'interrupted', [carried.id]: 'running', [done.id]: 'finished' });
    await store.finishTrainingRun({
      trainingRunId: carried.id,
      status: 'interrupted',
      errorReason: 'SIGTERM',
    });
    await expectCode(store.finishTrainingRun({ trainingRunId: carried.id, status: 'finished' }), 'conflict');
  });

  it('lets only the holder publish a version', async () => {
    const { policy, base } = await newPolicy();
    const version = await store.registerPolicyVersion({ policyId: policy.id, parentVersionId: base.id });
    await expectCode(
      store.commitTrainingCycle({ owner: 'a', versionId: version.id, adapterUri: '/x', makeDefault: true }),
      'policy-lease-lost',
    );
    await store.takePolicyLease({ policyId: policy.id, owner: 'b' });
    await expectCode(
      store.commitTrainingCycle({ owner: 'a', versionId: version.id, adapterUri: '/x', makeDefault: true }),
      'policy-lease-lost',
    );
    expect((await store.getDefaultVersion({ policyId: policy.id }))?.id).toBe(base.id);
    const committed = await store.commitTrainingCycle({
      owner: 'b',
      versionId: version.id,
      adapterUri: '/x',
      makeDefault: true,
    });
    expect(committed.version?.status).toBe('published');
    expect((await store.getDefaultVersion({ policyId: policy.id }))?.id).toBe(version.id);
  });
});
