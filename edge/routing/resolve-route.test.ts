// The router's rule for retired versions (refuseRetired in resolve-route.ts), against a real store:
// every way of naming a version for new traffic is refused once it is retired, and a route recorded
// before the retirement still reads back unchanged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyVersion } from '../../db/schema/policies.ts';
import { uniqueName } from '../../test/support/fixtures.ts';
import { openTestStore, type TestStore } from '../../test/support/open-test-store.ts';
import { ApiError } from '../http/api-error.ts';
import { resolveRoute } from './resolve-route.ts';
import { recordedRoute, trajectoryRouteFields } from './route.ts';

let testStore: TestStore;
let policyName: string;
let retired: PolicyVersion;
let current: PolicyVersion;

beforeAll(async () => {
  testStore = await openTestStore();
  const { store } = testStore;
  policyName = uniqueName('retiring');
  const policy = await store.createPolicy({ name: policyName, baseModel: 'tiny' });
  const v0 = await store.registerPolicyVersion({ policyId: policy.id });
  const v1 = await store.registerPolicyVersion({ policyId: policy.id });
  await store.publishPolicyVersion({ versionId: v0.id });
  current = await store.publishPolicyVersion({ versionId: v1.id, makeDefault: true });
  retired = v0;
});
afterAll(async () => {
  await testStore?.close();
});

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

describe('resolveRoute and retired versions', () => {
  it('routes to a version while it is published, and refuses it by every name once it is retired', async () => {
    const { store } = testStore;
    const byName = `${policyName}@0`;
    // Version 0 is the base weights: the endpoint serves it under the base model's name.
    const served = 'tiny';
    // Before: the version routes by its name, as the edge default and as an experiment's arm.
    expect(await resolveRoute(store, { policy: byName, stickinessKey: 'k' }, undefined)).toEqual({
      model: served,
      policyVersionId: retired.id,
    });
    const { experiment } = await store.createExperiment({
      name: uniqueName('ab-retiring'),
      // An experiment needs two published versions; the other arm's share (1e-18) is never drawn.
      arms: [
        { name: 'old', policyVersionId: retired.id, weight: 1e9 },
        { name: 'current', policyVersionId: current.id, weight: 1e-9 },
      ],
    });
    expect(
      (await resolveRoute(store, { experiment: experiment.name, stickinessKey: 'k' }, undefined)).model,
    ).toBe(served);
    const recordedBefore = await store.startTrajectory({
      env: 'my-agent',
      ...trajectoryRouteFields(await resolveRoute(store, { stickinessKey: 'k' }, byName)),
    });

    await store.retirePolicyVersion(retired.id);

    const named = await refusal(resolveRoute(store, { policy: byName, stickinessKey: 'k' }, undefined));
    expect(named.field).toBe('policy');
    expect(named.message).toBe(`policy: ${byName} is retired; it takes no new traffic`);
    // EDGERL_DEFAULT_MODEL naming it: refused too (before, the name was sent upstream as a plain model name).
    const asDefault = await refusal(resolveRoute(store, { stickinessKey: 'k' }, byName));
    expect(asDefault.field).toBe('policy');
    expect(asDefault.message).toBe(
      `policy: the edge's default model ${byName} is retired; it takes no new traffic`,
    );
    const asArm = await refusal(
      resolveRoute(store, { experiment: experiment.id, stickinessKey: 'k' }, undefined),
    );
    expect(asArm.field).toBe('experiment');
    expect(asArm.message).toContain(`arm old's version ${byName} is retired`);
    // The policy's name still routes, to its default, which cannot be retired.
    expect(await resolveRoute(store, { policy: policyName, stickinessKey: 'k' }, undefined)).toEqual({
      model: `${policyName}@1`,
      policyVersionId: current.id,
    });
    // A trajectory routed before the retirement keeps its route.
    const { trajectory } = await store.getTrajectory(recordedBefore.id);
    expect(recordedRoute(trajectory)).toEqual({ model: served, policyVersionId: retired.id });
  });
});
