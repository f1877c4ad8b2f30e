// The edge's route table (route-cache.ts) against a real store, on a clock the test moves: a name
// resolves from the table until its entry is routeCacheMs old, so a promotion reaches new traffic
// within that bound and not before it; a retirement likewise; an unknown name is kept as unknown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyVersion } from '../../db/schema/policies.ts';
import { uniqueName } from '../../test/support/fixtures.ts';
import { openTestStore, type TestStore } from '../../test/support/open-test-store.ts';
import { ApiError } from '../http/api-error.ts';
import { routeNamed } from './resolve-route.ts';
import { RouteCache, routeCacheMs } from './route-cache.ts';

let testStore: TestStore;
let policyId: string;
let policyName: string;
let first: PolicyVersion;
let second: PolicyVersion;

beforeAll(async () => {
  testStore = await openTestStore();
  const { store } = testStore;
  policyName = uniqueName('cached');
  const policy = await store.createPolicy({ name: policyName, baseModel: 'tiny' });
  policyId = policy.id;
  const v0 = await store.registerPolicyVersion({ policyId });
  const v1 = await store.registerPolicyVersion({ policyId });
  const v2 = await store.registerPolicyVersion({ policyId });
  await store.publishPolicyVersion({ versionId: v0.id });
  first = await store.publishPolicyVersion({ versionId: v1.id, makeDefault: true });
  second = await store.publishPolicyVersion({ versionId: v2.id });
});
afterAll(async () => {
  await testStore?.close();
});

/** A route table on a clock that moves only when the test says. */
function tableAt() {
  let now = 1_000_000;
  const routes = new RouteCache(routeCacheMs, () => now);
  return { routes, advance: (ms: number) => (now += ms) };
}

describe('the route table', () => {
  it('serves a name from the table until the entry is routeCacheMs old, then reads the promotion', async () => {
    const { store } = testStore;
    const { routes, advance } = tableAt();
    const route = () => routeNamed(store, policyName, 'policy', '', routes);
    expect(await route()).toEqual({ model: `${policyName}@1`, policyVersionId: first.id });
    await store.setDefaultVersion({ policyId, versionId: second.id });
    advance(routeCacheMs - 1);
    // Within the bound: the table's answer, not the store's.
    expect((await route())?.model).toBe(`${policyName}@1`);
    // Uncached, the same lookup sees the promotion at once.
    expect((await routeNamed(store, policyName, 'policy'))?.model).toBe(`${policyName}@2`);
    advance(1);
    expect(await route()).toEqual({ model: `${policyName}@2`, policyVersionId: second.id });
    await store.setDefaultVersion({ policyId, versionId: first.id });
  });

  it('refuses a retired version once its entry is read again, and keeps unknown names unknown', async () => {
    const { store } = testStore;
    const { routes, advance } = tableAt();
    const name = `${policyName}@0`;
    const route = () => routeNamed(store, name, 'policy', '', routes);
    expect((await route())?.model).toBe('tiny');
    await store.retirePolicyVersion((await store.resolvePolicyVersion(name))?.id as string);
    expect((await route())?.model).toBe('tiny');
    advance(routeCacheMs);
    const refused = await route().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).message).toBe(`policy: ${name} is retired; it takes no new traffic`);

    const unknown = uniqueName('nobody');
    expect(await routeNamed(store, unknown, 'model', '', routes)).toBeUndefined();
    const late = await store.createPolicy({ name: unknown, baseModel: 'tiny' });
    const v0 = await store.registerPolicyVersion({ policyId: late.id });
    await store.publishPolicyVersion({ versionId: v0.id, makeDefault: true });
    expect(await routeNamed(store, unknown, 'model', '', routes)).toBeUndefined();
    advance(routeCacheMs);
    expect((await routeNamed(store, unknown, 'model', '', routes))?.model).toBe('tiny');
  });

  it('keeps nothing with a bound of 0', async () => {
    const { store } = testStore;
    const routes = new RouteCache(0);
    const name = uniqueName('late');
    expect(await routeNamed(store, name, 'model', '', routes)).toBeUndefined();
    const policy = await store.createPolicy({ name, baseModel: 'tiny' });
    const v0 = await store.registerPolicyVersion({ policyId: policy.id });
    await store.publishPolicyVersion({ versionId: v0.id, makeDefault: true });
    expect((await routeNamed(store, name, 'model', '', routes))?.model).toBe('tiny');
  });
});
