// Policies, versions and their default; resolving a request's model name; training runs and steps;
// experiments. Each write either happens whole or reports what is wrong.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStoreError, type StoreError } from '../../db/errors.ts';
import type { Store } from '../../db/store.ts';
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

async function rejection(promise: Promise<unknown>): Promise<StoreError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!isStoreError(error)) throw new Error(`expected a StoreError, got ${String(error)}`);
  return error;
}

describe('policies and versions', () => {
  it('numbers versions per policy and names adapters <policy>@<version>', async () => {
    const policy = await store.createPolicy({
      name: uniqueName('agent'),
      baseModel: 'Qwen/Qwen2.5-0.5B-Instruct',
    });
    const v0 = await store.registerPolicyVersion({ policyId: policy.id });
    const v1 = await store.registerPolicyVersion({
      policyId: policy.id,
      parentVersionId: v0.id,
      adapterUri: 'file:///a/1',
    });
    expect([v0.version, v0.adapterName, v0.status]).toEqual([0, `${policy.name}@0`, 'training']);
    expect([v1.version, v1.adapterName, v1.parentVersionId]).toEqual([1, `${policy.name}@1`, v0.id]);
    const duplicate = await rejection(store.createPolicy({ name: policy.name, baseModel: 'x' }));
    expect(duplicate.code).toBe('conflict');
    const takenVersion = await rejection(store.registerPolicyVersion({ policyId: policy.id, version: 1 }));
    expect(takenVersion.code).toBe('conflict');
  });

  it('numbers concurrent registrations without duplicates', async () => {
    const policy = await store.createPolicy({ name: uniqueName('agent'), baseModel: 'tiny' });
    const versions = await Promise.all(
      Array.from({ length: 5 }, () => store.registerPolicyVersion({ policyId: policy.id })),
    );
    expect(versions.map((version) => version.version).sort()).toEqual([0, 1, 2, 3, 4]);
  });

  it('publishes, sets the default, resolves model names, and guards the default from retirement', async () => {
    const policy = await store.createPolicy({ name: uniqueName('agent'), baseModel: 'tiny' });
    const v0 = await store.registerPolicyVersion({ policyId: policy.id });
    const v1 = await store.registerPolicyVersion({ policyId: policy.id });
    expect(await store.getDefaultVersion({ policyId: policy.id })).toBeUndefined();
    const unpublished = await rejection(store.setDefaultVersion({ policyId: policy.id, versionId: v1.id }));
    expect(unpublished.code).toBe('conflict');

    const published = await store.publishPolicyVersion({
      versionId: v0.id,
      adapterUri: 's3://adapters/0',
      makeDefault: true,
    });
    expect(published).toMatchObject({ status: 'published', adapterUri: 's3://adapters/0' });
    expect((await store.getDefaultVersion({ policyName: policy.name }))?.id).toBe(v0.id);
    expect((await store.resolvePolicyVersion(policy.name))?.id).toBe(v0.id);
    expect((await store.resolvePolicyVersion(`${policy.name}@1`))?.id).toBe(v1.id);
    expect(await store.resolvePolicyVersion('no-such-model')).toBeUndefined();

    const retireDefault = await rejection(store.retirePolicyVersion(v0.id));
    expect(retireDefault.code).toBe('conflict');
    await store.publishPolicyVersion({ versionId: v1.id });
    await store.setDefaultVersion({ policyId: policy.id, versionId: v1.id });
    expect((await store.resolvePolicyVersion(policy.name))?.id).toBe(v1.id);
    expect((await store.retirePolicyVersion(v0.id)).status).toBe('retired');
    expect((await rejection(store.publishPolicyVersion({ versionId: v0.id }))).code).toBe('conflict');
  });

  it("refuses another policy's version as the default", async () => {
    const a = await store.createPolicy({ name: uniqueName('a'), baseModel: 'tiny' });
    const b = await store.createPolicy({ name: uniqueName('b'), baseModel: 'tiny' });
    const bVersion = await store.registerPolicyVersion({ policyId: b.id });
    await store.publishPolicyVersion({ versionId: bVersion.id });
    const error = await rejection(store.setDefaultVersion({ policyId: a.id, versionId: bVersion.id }));
    expect(error.code).toBe('validation');
    expect(await store.getDefaultVersion({ policyId: a.id })).toBeUndefined();
  });

  it('names the bad field of a bad policy and writes nothing', async () => {
    const name = `bad@${uniqueName('x')}`;
    const error = await rejection(store.createPolicy({ name, baseModel: '' }));
    expect(error.code).toBe('validation');
    expect(error.issues.map((issue) => issue.path.join('.'))).toEqual(['name', 'baseModel']);
    const rows = await store.sql.query('select count(*) from policies where name = $1', [name]);
    expect(rows.rows[0]?.[0]).toBe(0);
  });

  it('reports a reference to a missing row as not-found', async () => {
    const error = await rejection(
      store.registerPolicyVersion({ policyId: '00000000-0000-4000-8000-000000000000' }),
    );
    expect(error.code).toBe('not-found');
    const missingTask = await rejection(
      store.createGroup({ taskId: '00000000-0000-4000-8000-000000000000', size: 2 }),
    );
    expect(missingTask.code).toBe('not-found');
  });
});

describe('training runs', () => {
  it('records steps with metrics once each, and no steps after the run ends', async () => {
    const policy = await store.createPolicy({ name: uniqueName('agent'), baseModel: 'tiny' });
    const run = await store.startTrainingRun({ policyId: policy.id, config: { lr: 1e-5, loss: 'cispo' } });
    const { group } = await makeCompleteGroup(store, [1, 0]);
    const step = await store.recordTrainingStep({
      trainingRunId: run.id,
      step: 0,
      metrics: { 'reward/mean': 0.5, 'kl/mean': 0.01 },
      groupIds: [group.id],
    });
    expect(step).toMatchObject({
      step: 0,
      metrics: { 'reward/mean': 0.5, 'kl/mean': 0.01 },
      groupIds: [group.id],
    });
    expect(
      (await rejection(store.recordTrainingStep({ trainingRunId: run.id, step: 0, metrics: {} }))).code,
    ).toBe('conflict');
    const bad = await rejection(
      store.recordTrainingStep({ trainingRunId: run.id, step: 1, metrics: { 'loss/x': 'high' } as never }),
    );
    expect(bad.message).toContain('metrics.loss/x');
    const finished = await store.finishTrainingRun({ trainingRunId: run.id, status: 'finished' });
    expect(finished.status).toBe('finished');
    expect(
      (await rejection(store.recordTrainingStep({ trainingRunId: run.id, step: 2, metrics: {} }))).code,
    ).toBe('conflict');
    const version = await store.registerPolicyVersion({ policyId: policy.id, trainingRunId: run.id });
    expect(version.trainingRunId).toBe(run.id);
  });
});

describe('experiments', () => {
  it('creates, reads, reweights and stops an experiment', async () => {
    const policy = await store.createPolicy({ name: uniqueName('agent'), baseModel: 'tiny' });
    const v0 = await store.registerPolicyVersion({ policyId: policy.id });
    const v1 = await store.registerPolicyVersion({ policyId: policy.id });
    await store.publishPolicyVersion({ versionId: v0.id });
    await store.publishPolicyVersion({ versionId: v1.id });
    const name = uniqueName('exp');
    const created = await store.createExperiment({
      name,
      arms: [
        { name: 'control', policyVersionId: v0.id, weight: 9 },
        { name: 'candidate', policyVersionId: v1.id, weight: 1 },
      ],
    });
    // In the order given, weights normalised: 9 / 10 and 1 / 10.
    expect(created.arms.map((arm) => [arm.name, arm.position, arm.weight])).toEqual([
      ['control', 0, 0.9],
      ['candidate', 1, 0.1],
    ]);
    expect(created.experiment).toMatchObject({ policyId: policy.id, metric: 'reward', minSamples: 100 });
    const reweighted = await store.setArmWeights({
      experimentId: created.experiment.id,
      weights: { candidate: 5 },
    });
    expect(reweighted.arms.map((arm) => [arm.name, arm.weight])).toEqual([
      ['candidate', 5],
      ['control', 0.9],
    ]);
    const unknownArm = await rejection(
      store.setArmWeights({ experimentId: created.experiment.id, weights: { nope: 1 } }),
    );
    expect(unknownArm.message).toContain('weights.nope');
    expect((await store.getExperiment({ name })).experiment.id).toBe(created.experiment.id);
    expect((await store.stopExperiment(created.experiment.id)).status).toBe('stopped');
    expect(
      (await store.listExperiments({ status: 'stopped', policyId: policy.id })).map((e) => e.name),
    ).toEqual([name]);
  });

  it('rejects arms from another policy and writes no experiment', async () => {
    const policy = await store.createPolicy({ name: uniqueName('agent'), baseModel: 'tiny' });
    const other = await store.createPolicy({ name: uniqueName('other'), baseModel: 'tiny' });
    const own = await store.publishPolicyVersion({
      versionId: (await store.registerPolicyVersion({ policyId: policy.id })).id,
    });
    const foreign = await store.publishPolicyVersion({
      versionId: (await store.registerPolicyVersion({ policyId: other.id })).id,
    });
    const name = uniqueName('exp');
    const error = await rejection(
      store.createExperiment({
        name,
        arms: [
          { name: 'a', policyVersionId: own.id },
          { name: 'b', policyVersionId: foreign.id },
        ],
      }),
    );
    expect(error.code).toBe('validation');
    expect(error.message).toContain(`${foreign.adapterName} belongs to another policy`);
    expect((await rejection(store.getExperiment({ name }))).code).toBe('not-found');
  });
});
