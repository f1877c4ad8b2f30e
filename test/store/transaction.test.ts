// store.transaction(work): the Store it hands over has the same API, its writes commit together when
// `work` resolves and vanish together when it throws, and a constraint failure inside it is the same
// StoreError as outside.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError } from '../../db/errors.ts';
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

describe('store.transaction', () => {
  it('commits every write made through the transaction store when the work resolves', async () => {
    const name = uniqueName('tx-commit');
    const versionName = await store.transaction(async (tx) => {
      const policy = await tx.createPolicy({ name, baseModel: 'tiny' });
      const version = await tx.registerPolicyVersion({ policyId: policy.id });
      return version.adapterName;
    });
    expect(versionName).toBe(`${name}@0`);
    const policy = await store.getPolicy({ policyName: name });
    expect((await store.resolvePolicyVersion(versionName))?.policyId).toBe(policy.id);
  });

  it('rolls every write back when the work throws, and rethrows its error', async () => {
    const name = uniqueName('tx-rollback');
    const boom = new Error('changed my mind');
    await expect(
      store.transaction(async (tx) => {
        await tx.createPolicy({ name, baseModel: 'tiny' });
        throw boom;
      }),
    ).rejects.toBe(boom);
    const error = await store.getPolicy({ policyName: name }).catch((caught: unknown) => caught);
    expect(isStoreError(error) && error.code).toBe('not-found');
  });

  it('maps a constraint failure inside the transaction to the same StoreError as outside', async () => {
    const name = uniqueName('tx-conflict');
    await store.createPolicy({ name, baseModel: 'tiny' });
    const outside = await store.createPolicy({ name, baseModel: 'tiny' }).catch((caught: unknown) => caught);
    const inside = await store
      .transaction((tx) => tx.createPolicy({ name, baseModel: 'tiny' }))
      .catch((caught: unknown) => caught);
    expect(isStoreError(outside) && outside.code).toBe('conflict');
    expect(isStoreError(inside) && inside.code).toBe('conflict');
  });
});
