// Fleet publication rows: a version's state per replica, the commit that turns verified replicas
// ready together with the version, the edge's "which replicas serve this name", and the rule that a
// version no replica serves is never made the default.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError, type StoreError } from '../../db/errors.ts';
import type { Store } from '../../db/store.ts';
import { uniqueName } from '../support/fixtures.ts';
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

async function rejection(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isStoreError(error)) throw new Error(`expected a StoreError, got ${String(error)}`);
  return error;
}

const a = 'http://a:8000/v1';
const b = 'http://b:8000/v1';
const c = 'http://c:8000/v1';

/** A policy whose base version is its published default, and one trained version still `training`. */
async function policyWithTrained() {
  const owner = uniqueName('trainer');
  const policy = await store.createPolicy({ name: uniqueName('fleet'), baseModel: 'tiny' });
  const base = await store.registerPolicyVersion({ policyId: policy.id });
  await store.publishPolicyVersion({ versionId: base.id, makeDefault: true });
  const lease = await store.takePolicyLease({ policyId: policy.id, owner });
  expect(lease.taken).toBe(true);
  const trained = await store.registerPolicyVersion({
    policyId: policy.id,
    parentVersionId: base.id,
    adapterUri: '/adapters/x',
  });
  return { owner, policy, base, trained };
}

describe('publications', () => {
  it('records each phase per replica, counting loads and keeping the last error', async () => {
    const { trained } = await policyWithTrained();
    await store.recordPublication({
      versionId: trained.id,
      replica: `${a}/`,
      state: 'loading',
      attempt: true,
    });
    await store.recordPublication({ versionId: trained.id, replica: a, state: 'verified' });
    await store.recordPublication({ versionId: trained.id, replica: b, state: 'loading', attempt: true });
    await store.recordPublication({
      versionId: trained.id,
      replica: b,
      state: 'quarantined',
      error: 'load: connection refused',
    });
    const rows = await store.listPublications({ versionId: trained.id });
    expect(rows.map((row) => [row.replica, row.state, row.attempts, row.lastError, row.adapterName])).toEqual(
      [
        [a, 'verified', 1, null, trained.adapterName],
        [b, 'quarantined', 1, 'load: connection refused', trained.adapterName],
      ],
    );
    // `ready` comes only with the commit (or, for a published version, a catch-up).
    const early = await rejection(
      store.recordPublication({ versionId: trained.id, replica: a, state: 'ready' }),
    );
    expect(early.code).toBe('conflict');
    expect(early.message).toMatch(/is training: its replicas become ready when it is committed/);
  });

  it('commits the version with the replicas that verified it, and serves it only there', async () => {
    const { owner, policy, trained } = await policyWithTrained();
    expect(await store.servingReplicas(trained.adapterName)).toEqual({
      kind: 'adapter',
      versionId: trained.id,
      ready: [],
    });
    for (const replica of [a, b]) {
      await store.recordPublication({ versionId: trained.id, replica, state: 'loading', attempt: true });
      await store.recordPublication({ versionId: trained.id, replica, state: 'verified' });
    }
    await store.recordPublication({ versionId: trained.id, replica: c, state: 'quarantined', error: 'x' });
    const committed = await store.commitTrainingCycle({
      owner,
      versionId: trained.id,
      makeDefault: true,
      replicas: { acknowledged: [a, b], fleet: [a, b, c] },
    });
    expect(committed.version?.status).toBe('published');
    const rows = await store.listPublications({ versionId: trained.id });
    expect(rows.map((row) => [row.replica, row.state, row.readyAt !== null])).toEqual([
      [a, 'ready', true],
      [b, 'ready', true],
      [c, 'quarantined', false],
    ]);
    expect(await store.servingReplicas(trained.adapterName)).toEqual({
      kind: 'adapter',
      versionId: trained.id,
      ready: [a, b],
    });
    // Names the store has no adapter for (the base model's) are served by every replica.
    expect(await store.servingReplicas('tiny')).toEqual({ kind: 'any' });
    // Now published: a catch-up may mark a replica ready directly.
    await store.recordPublication({ versionId: trained.id, replica: c, state: 'ready' });
    expect(await store.servingReplicas(trained.adapterName)).toMatchObject({ ready: [a, b, c] });
    // What a catch-up loads: the published trained versions (never the base weights).
    expect((await store.servableVersions({ policyName: policy.name })).map((version) => version.id)).toEqual([
      trained.id,
    ]);
  });

  it('refuses a commit no replica verified, and a default no replica of the fleet holds', async () => {
    const { owner, policy, base, trained } = await policyWithTrained();
    await store.recordPublication({
      versionId: trained.id,
      replica: a,
      state: 'quarantined',
      error: 'probe: 500',
    });
    const unverified = await rejection(
      store.commitTrainingCycle({
        owner,
        versionId: trained.id,
        makeDefault: true,
        replicas: { acknowledged: [a], fleet: [a] },
      }),
    );
    expect(unverified.code).toBe('conflict');
    // All or nothing: the version is still training and the base still the default.
    expect((await store.getPolicyVersion(trained.id)).status).toBe('training');
    expect((await store.getDefaultVersion({ policyId: policy.id }))?.id).toBe(base.id);

    // Published without the default (an A/B candidate), ready on b only.
    await store.recordPublication({ versionId: trained.id, replica: b, state: 'verified' });
    await store.commitTrainingCycle({
      owner,
      versionId: trained.id,
      replicas: { acknowledged: [b], fleet: [a, b] },
    });
    const elsewhere = await rejection(
      store.setDefaultVersion({ policyId: policy.id, versionId: trained.id, fleet: [a, c] }),
    );
    expect(elsewhere.code).toBe('conflict');
    expect(elsewhere.message).toMatch(
      /is ready on no replica of the fleet \(http:\/\/a:8000\/v1 quarantined\)/,
    );
    // b restarts and the edge quarantines it there: then no replica at all holds it.
    await store.recordPublication({
      versionId: trained.id,
      replica: b,
      state: 'quarantined',
      error: 'edge: 404',
    });
    const nowhere = await rejection(store.setDefaultVersion({ policyId: policy.id, versionId: trained.id }));
    expect(nowhere.message).toMatch(/is ready on no replica \(.*b:8000\/v1 quarantined\)/);
    // The base version is the base weights: every replica serves it, no rows needed.
    await store.setDefaultVersion({ policyId: policy.id, versionId: base.id, fleet: [a] });
    await store.recordPublication({ versionId: trained.id, replica: b, state: 'ready' });
    expect(
      (await store.setDefaultVersion({ policyId: policy.id, versionId: trained.id, fleet: [a, b] })).id,
    ).toBe(trained.id);
  });
});
