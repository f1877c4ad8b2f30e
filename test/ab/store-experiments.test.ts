// The store functions behind `edgerl ab`: resolving version names, creating experiments, gathering
// per-arm outcomes, promoting and rolling back, on PGlite (or a server with EDGERL_TEST_DATABASE_URL).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyVersion } from '../../db/schema/policies.ts';
import type { Store } from '../../db/store.ts';
import { abArmOutcomes } from '../../db/store/ab-arm-outcomes.ts';
import { loadAbReport } from '../../experiments/load-ab-report.ts';
import { getAbExperiment } from '../../db/store/get-ab-experiment.ts';
import { listAbExperiments } from '../../db/store/list-ab-experiments.ts';
import { promoteArm } from '../../db/store/promote-arm.ts';
import { resolveVersionRef } from '../../db/store/resolve-version-ref.ts';
import { rollbackDefaultVersion } from '../../db/store/rollback-default-version.ts';
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

/** A policy with versions 0…n−1, the first `published` of them published, version 0 the default. */
async function makePolicy(n: number, published = n, withDefault = true) {
  const policy = await store.createPolicy({ name: uniqueName('agent'), baseModel: 'tiny-qwen' });
  const versions: PolicyVersion[] = [];
  for (let index = 0; index < n; index++) {
    const version = await store.registerPolicyVersion({ policyId: policy.id });
    versions.push(
      index < published
        ? await store.publishPolicyVersion({ versionId: version.id, makeDefault: withDefault && index === 0 })
        : version,
    );
  }
  return { policy, versions };
}

function at<T>(list: readonly T[], index: number): T {
  const item = list[index];
  if (item === undefined) throw new Error(`no item ${index}`);
  return item;
}

describe('resolveVersionRef', () => {
  it('finds a version by id, served name, <policy>@latest and policy name', async () => {
    const { policy, versions } = await makePolicy(3, 2); // @0, @1 published; @2 training
    const [v0, v1] = [at(versions, 0), at(versions, 1)];
    expect((await resolveVersionRef(store.db, v1.id)).id).toBe(v1.id);
    expect((await resolveVersionRef(store.db, `${policy.name}@1`)).id).toBe(v1.id);
    expect((await resolveVersionRef(store.db, `${policy.name}@latest`)).id).toBe(v1.id); // @2 is not published
    expect((await resolveVersionRef(store.db, policy.name)).id).toBe(v0.id); // the default
  });

  it('names what it could not find', async () => {
    await expect(resolveVersionRef(store.db, 'ghost@4')).rejects.toThrow(/version "ghost@4" does not exist/);
    await expect(resolveVersionRef(store.db, 'ghost@latest')).rejects.toThrow(/no policy named "ghost"/);
    const { policy } = await makePolicy(1, 0);
    await expect(resolveVersionRef(store.db, `${policy.name}@latest`)).rejects.toThrow(
      /has no published version/,
    );
  });
});

describe('createExperiment', () => {
  it('stores weights normalised, arms in the order given, the metric and the sample size', async () => {
    const { versions } = await makePolicy(3);
    const name = uniqueName('exp');
    // Control @2 first, then @0: the order of the arms is not their names' order.
    const created = await store.createExperiment({
      name,
      metric: 'success',
      minSamples: 40,
      arms: [
        { policyVersionId: at(versions, 2).id, weight: 1 },
        { policyVersionId: at(versions, 0).id, weight: 3 },
      ],
    });
    expect(created.experiment).toMatchObject({ name, metric: 'success', minSamples: 40, status: 'running' });
    const view = await getAbExperiment(store.db, name);
    expect(view.arms.map((arm) => [arm.name, arm.position, arm.weight])).toEqual([
      [at(versions, 2).adapterName, 0, 0.25], // 1 / (1 + 3)
      [at(versions, 0).adapterName, 1, 0.75], // 3 / (1 + 3)
    ]);
    expect((await getAbExperiment(store.db, created.experiment.id)).experiment.name).toBe(name);
  });

  it('refuses fewer than two arms, repeated or unpublished versions, other policies and taken names', async () => {
    const { versions } = await makePolicy(3, 2);
    const other = await makePolicy(1);
    const [v0, v1, training] = [at(versions, 0), at(versions, 1), at(versions, 2)];
    const attempt = (arms: PolicyVersion[], name = uniqueName('exp')) =>
      store.createExperiment({
        name,
        minSamples: 10,
        arms: arms.map((version) => ({ policyVersionId: version.id, weight: 1 })),
      });
    await expect(attempt([v0])).rejects.toThrow(/arms: an experiment needs at least two arms/);
    await expect(attempt([v0, v0])).rejects.toThrow(`arms.1: ${v0.adapterName} is already an arm`);
    await expect(attempt([v0, training])).rejects.toThrow(`arms.1: ${training.adapterName} is training`);
    await expect(attempt([v0, at(other.versions, 0)])).rejects.toThrow(/belongs to another policy/);
    const taken = uniqueName('exp');
    await attempt([v0, v1], taken);
    await expect(attempt([v1, v0], taken)).rejects.toThrow(`experiment "${taken}" already exists`);
    await expect(attempt([v0, v1], '3f1c0d0e-0000-4000-8000-000000000000')).rejects.toThrow(
      /must not look like an id/,
    );
    await expect(attempt([v0, v1], 'has space')).rejects.toThrow(/name: letters, digits/);
  });
  it('defaults the metric, the sample size and the arm names, and keeps names given', async () => {
    const { policy, versions } = await makePolicy(2);
    const [v0, v1] = [at(versions, 0), at(versions, 1)];
    const plain = await store.createExperiment({
      name: uniqueName('exp'),
      arms: [{ policyVersionId: v0.id }, { policyVersionId: v1.id }],
    });
    // metric and minSamples as `edgerl ab create` defaults them; equal weights 1 → 1/2 each.
    expect(plain.experiment).toMatchObject({ policyId: policy.id, metric: 'reward', minSamples: 100 });
    expect(plain.arms.map((arm) => [arm.name, arm.position, arm.weight])).toEqual([
      [v0.adapterName, 0, 0.5],
      [v1.adapterName, 1, 0.5],
    ]);
    // Names given, listed out of their alphabetical order: positions follow the order given.
    const named = await store.createExperiment({
      name: uniqueName('exp'),
      arms: [
        { name: 'start', policyVersionId: v0.id, weight: 2 },
        { name: 'final', policyVersionId: v1.id, weight: 6 },
      ],
    });
    expect(named.arms.map((arm) => [arm.name, arm.position, arm.weight])).toEqual([
      ['start', 0, 0.25],
      ['final', 1, 0.75],
    ]);
    // One version under two names: an A/A comparison (the demo's, when RL published nothing).
    const same = await store.createExperiment({
      name: uniqueName('exp'),
      arms: [
        { name: 'start', policyVersionId: v0.id },
        { name: 'final', policyVersionId: v0.id },
      ],
    });
    expect(same.arms.map((arm) => [arm.name, arm.policyVersionId])).toEqual([
      ['start', v0.id],
      ['final', v0.id],
    ]);
  });

  it('answers with the store error codes callers branch on', async () => {
    const { versions } = await makePolicy(3, 2);
    const [v0, v1, training] = [at(versions, 0), at(versions, 1), at(versions, 2)];
    const codeOf = (promise: Promise<unknown>) =>
      promise.then(
        () => 'created',
        (error: unknown) => (error as { code?: string }).code,
      );
    const arms = [{ policyVersionId: v0.id }, { policyVersionId: v1.id }];
    expect(
      await codeOf(
        store.createExperiment({
          name: uniqueName('exp'),
          arms: [{ policyVersionId: v0.id }, { policyVersionId: '3f1c0d0e-0000-4000-8000-000000000000' }],
        }),
      ),
    ).toBe('not-found');
    expect(
      await codeOf(
        store.createExperiment({
          name: uniqueName('exp'),
          arms: [{ policyVersionId: v0.id }, { policyVersionId: training.id }],
        }),
      ),
    ).toBe('conflict');
    expect(
      await codeOf(
        store.createExperiment({
          name: uniqueName('exp'),
          arms: [
            { name: 'same', policyVersionId: v0.id },
            { name: 'same', policyVersionId: v1.id },
          ],
        }),
      ),
    ).toBe('validation');
    expect(await codeOf(store.createExperiment({ name: uniqueName('exp'), arms, minSamples: 1 }))).toBe(
      'validation',
    );
    expect(
      await codeOf(
        store.createExperiment({
          name: uniqueName('exp'),
          arms: [{ policyVersionId: v0.id, weight: 0 }, { policyVersionId: v1.id }],
        }),
      ),
    ).toBe('validation');
  });
});

describe('abArmOutcomes and listAbExperiments', () => {
  it('counts outcomes per arm, averages turns and latency of ended trajectories, and returns the rewards', async () => {
    const { versions } = await makePolicy(2);
    const name = uniqueName('exp');
    const { experiment, arms } = await store.createExperiment({
      name,
      minSamples: 10,
      arms: versions.map((version) => ({ policyVersionId: version.id, weight: 1 })),
    });
    const evalTask = await store.upsertTask({
      env: 'multi-hop',
      key: uniqueName('task'),
      input: {},
      split: 'eval',
    });
    // [arm, status, verifier, final, judge, turns, latency, eval task]
    const episodes = [
      [0, 'finished', 1, 0.8, 0.9, 4, 100, false],
      [0, 'finished', 0, null, null, 2, 300, true],
      [0, 'error', null, null, null, 1, 50, false],
      [0, 'running', null, null, null, 9, 999, false],
      [1, 'truncated', 0, null, 0.2, 10, 1000, true],
      [1, 'finished', 1, null, null, 6, 200, false],
    ] as const;
    for (const [armIndex, status, verifier, final, judge, turns, latency, onEval] of episodes) {
      const arm = at(arms, armIndex);
      const trajectory = await store.startTrajectory({
        env: 'multi-hop',
        experimentArmId: arm.id,
        policyVersionId: arm.policyVersionId,
        ...(onEval ? { taskId: evalTask.id } : {}),
      });
      await store.sql.query(
        'update trajectories set turn_count = $2, latency_ms = $3, judge_score = $4 where id = $1',
        [trajectory.id, turns, latency, judge],
      );
      if (status === 'running') continue;
      await store.finishTrajectory({
        trajectoryId: trajectory.id,
        status,
        ...(verifier === null ? {} : { verifierReward: verifier }),
        ...(status === 'finished' ? {} : { errorReason: 'why' }),
      });
      if (final !== null)
        await store.setFinalRewards({ rewards: [{ trajectoryId: trajectory.id, finalReward: final }] });
    }

    const outcomes = await abArmOutcomes(store.db, { experimentId: experiment.id });
    expect(outcomes.map(({ armId: _, ...rest }) => rest)).toEqual([
      {
        name: at(versions, 0).adapterName,
        position: 0,
        adapterName: at(versions, 0).adapterName,
        weight: 0.5,
        running: 1,
        finished: 2,
        truncated: 0,
        error: 1,
        turnCountMean: 7 / 3, // (4 + 2 + 1) / 3 ended
        latencyMsMean: 150, // (100 + 300 + 50) / 3
        // auto: final 0.8 over verifier 1; verifier 0; the error has none
        ended: [
          { status: 'finished', reward: 0.8 },
          { status: 'finished', reward: 0 },
          { status: 'error', reward: null },
        ],
      },
      {
        name: at(versions, 1).adapterName,
        position: 1,
        adapterName: at(versions, 1).adapterName,
        weight: 0.5,
        running: 0,
        finished: 1,
        truncated: 1,
        error: 0,
        turnCountMean: 8, // (10 + 6) / 2
        latencyMsMean: 600, // (1000 + 200) / 2
        ended: [
          { status: 'truncated', reward: 0 },
          { status: 'finished', reward: 1 },
        ],
      },
    ]);
    const rewardsOf = async (reward: 'verifier' | 'judge' | 'final', split?: 'eval') =>
      (
        await abArmOutcomes(store.db, { experimentId: experiment.id, reward, ...(split ? { split } : {}) })
      ).map((arm) => arm.ended.map((trajectory) => trajectory.reward));
    expect(await rewardsOf('verifier')).toEqual([
      [1, 0, null],
      [0, 1],
    ]);
    expect(await rewardsOf('judge')).toEqual([
      [0.9, null, null],
      [0.2, null],
    ]);
    expect(await rewardsOf('final')).toEqual([
      [0.8, null, null],
      [null, null],
    ]);
    const evalOnly = await abArmOutcomes(store.db, { experimentId: experiment.id, split: 'eval' });
    expect(evalOnly.map((arm) => [arm.finished, arm.truncated, arm.running, arm.ended])).toEqual([
      [1, 0, 0, [{ status: 'finished', reward: 0 }]],
      [0, 1, 0, [{ status: 'truncated', reward: 0 }]],
    ]);

    const [listed] = (await listAbExperiments(store.db)).filter((entry) => entry.experiment.name === name);
    expect(listed?.arms).toEqual([
      {
        name: at(versions, 0).adapterName,
        adapterName: at(versions, 0).adapterName,
        weight: 0.5,
        ended: 3,
        rewarded: 2,
      },
      {
        name: at(versions, 1).adapterName,
        adapterName: at(versions, 1).adapterName,
        weight: 0.5,
        ended: 2,
        rewarded: 2,
      },
    ]);
  });
});

describe('loadAbReport: the one success rule (experiments/success.ts)', () => {
  /** One ended trajectory on the arm, with a verifier reward and a final reward where given. */
  async function end(
    arm: { id: string; policyVersionId: string },
    status: 'finished' | 'truncated' | 'error',
    verifier: number | null,
    final: number | null = null,
  ) {
    const trajectory = await store.startTrajectory({
      env: 'multi-hop',
      experimentArmId: arm.id,
      policyVersionId: arm.policyVersionId,
    });
    await store.finishTrajectory({
      trajectoryId: trajectory.id,
      status,
      ...(verifier === null ? {} : { verifierReward: verifier }),
      ...(status === 'error' ? { errorReason: 'policy-down' } : {}),
    });
    if (final !== null)
      await store.setFinalRewards({ rewards: [{ trajectoryId: trajectory.id, finalReward: final }] });
  }

  it('leaves out errors and missing rewards, and counts a reward of exactly 1 as a success', async () => {
    const { versions } = await makePolicy(2);
    const name = uniqueName('exp');
    const { arms } = await store.createExperiment({
      name,
      metric: 'success',
      minSamples: 2,
      arms: versions.map((version) => ({ policyVersionId: version.id })),
    });
    const [control, treatment] = [at(arms, 0), at(arms, 1)];
    await end(control, 'finished', 1);
    await end(control, 'finished', 0);
    await end(control, 'truncated', 1);
    await end(control, 'finished', null); // old demo rule: a failure, 2/4; now left out: 2/3
    await end(control, 'error', null, 1); // old `ab report` rule: a success; now left out
    await end(treatment, 'finished', 1);
    await end(treatment, 'finished', 1);

    const { report } = await loadAbReport(store, name);
    expect(
      report.arms.map((arm) => [arm.rewarded, arm.errors, arm.success?.successes, arm.success?.n]),
    ).toEqual([
      [3, 1, 2, 3],
      [2, 0, 2, 2],
    ]);
    expect(report.test).toBe('two-proportion-z');

    // A combined reward above 1 (old demo rule: a success): no success rate, means compared instead.
    await end(treatment, 'finished', 1, 1.5);
    const { report: combined } = await loadAbReport(store, name);
    expect(combined.binaryRewards).toBe(false);
    expect(combined.arms.map((arm) => arm.success)).toEqual([null, null]);
    expect(combined.test).toBe('welch-t');
    // The verifier's rewards alone are still 0 or 1: the demo reads those.
    const { report: verifier } = await loadAbReport(store, name, { reward: 'verifier' });
    expect(verifier.arms.map((arm) => arm.success?.successes)).toEqual([2, 3]);
  });
});

describe('promoteArm and rollbackDefaultVersion', () => {
  async function experimentOn(versions: readonly PolicyVersion[]) {
    return store.createExperiment({
      name: uniqueName('exp'),
      minSamples: 10,
      arms: versions.map((version) => ({ policyVersionId: version.id, weight: 1 })),
    });
  }

  it('moves the default, stops the experiment, and rolls back one promote at a time', async () => {
    const { policy, versions } = await makePolicy(3);
    const [v0, v1, v2] = [at(versions, 0), at(versions, 1), at(versions, 2)];
    const first = await experimentOn([v0, v1]);
    const promoted = await promoteArm(store.db, {
      experimentId: first.experiment.id,
      armId: at(first.arms, 1).id,
    });
    expect(promoted.previous?.id).toBe(v0.id);
    expect(promoted.promoted.id).toBe(v1.id);
    expect(promoted.experiment.status).toBe('stopped');
    const second = await experimentOn([v1, v2]);
    await promoteArm(store.db, { experimentId: second.experiment.id, armId: at(second.arms, 1).id });
    expect((await store.getDefaultVersion({ policyId: policy.id }))?.id).toBe(v2.id);

    const back = await rollbackDefaultVersion(store.db, { policyId: policy.id });
    expect([back.from.id, back.to.id]).toEqual([v2.id, v1.id]);
    const further = await rollbackDefaultVersion(store.db, { policyId: policy.id });
    expect([further.from.id, further.to.id]).toEqual([v1.id, v0.id]);
    expect((await store.getDefaultVersion({ policyId: policy.id }))?.id).toBe(v0.id);
    await expect(rollbackDefaultVersion(store.db, { policyId: policy.id })).rejects.toThrow(
      /no promote left/,
    );

    // A promote after rollbacks is undone by the next rollback, and nothing before it is revisited.
    const third = await experimentOn([v0, v2]);
    await promoteArm(store.db, { experimentId: third.experiment.id, armId: at(third.arms, 1).id });
    expect((await rollbackDefaultVersion(store.db, { policyId: policy.id })).to.id).toBe(v0.id);
    await expect(rollbackDefaultVersion(store.db, { policyId: policy.id })).rejects.toThrow(
      /no promote left/,
    );
  });

  it('records nothing when the arm already is the default, and refuses rollbacks it cannot honour', async () => {
    const { policy, versions } = await makePolicy(2);
    const [v0, v1] = [at(versions, 0), at(versions, 1)];
    const same = await experimentOn([v0, v1]);
    const noop = await promoteArm(store.db, { experimentId: same.experiment.id, armId: at(same.arms, 0).id });
    expect(noop.change).toBeUndefined();
    expect(noop.experiment.status).toBe('stopped');

    const next = await experimentOn([v0, v1]);
    await promoteArm(store.db, { experimentId: next.experiment.id, armId: at(next.arms, 1).id });
    await store.setDefaultVersion({ policyId: policy.id, versionId: v0.id }); // moved outside edgerl ab
    await expect(rollbackDefaultVersion(store.db, { policyId: policy.id })).rejects.toThrow(
      `the default of "${policy.name}" is ${v0.adapterName}, not ${v1.adapterName} as its last promote left it`,
    );

    const fresh = await makePolicy(2, 2, false); // no default yet
    const experiment = await experimentOn(fresh.versions);
    await promoteArm(store.db, { experimentId: experiment.experiment.id, armId: at(experiment.arms, 0).id });
    await expect(rollbackDefaultVersion(store.db, { policyId: fresh.policy.id })).rejects.toThrow(
      /had no default version before .* was promoted; nothing to roll back to/,
    );
    await expect(
      promoteArm(store.db, { experimentId: experiment.experiment.id, armId: at(next.arms, 0).id }),
    ).rejects.toThrow(/is not an arm of experiment/);
  });
});
