// The console's read-only store functions against a seeded store (test/support/seed-console.ts):
// training runs and their steps with staleness, group search and filters, live turns of a running
// group, newest judge scores, policy lineage, and two versions' answers to the same tasks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleSeed, seedConsoleStore } from '../support/seed-console.ts';
import { openTestStore, type TestStore } from '../support/open-test-store.ts';

let test: TestStore;
let seed: ConsoleSeed;

beforeAll(async () => {
  test = await openTestStore();
  seed = await seedConsoleStore(test.store);
});
afterAll(() => test?.close());

describe('training runs', () => {
  it('lists runs with step counts, their base version and what they produced', async () => {
    const runs = await test.store.listTrainingRuns();
    const [run1, run2] = seed.runs;
    const byId = new Map(runs.map((run) => [run.run.id, run]));
    expect(byId.get(run1?.id ?? '')).toMatchObject({
      stepCount: 14,
      firstStep: 801,
      lastStep: 814,
      baseAdapterName: 'agent@0',
      versions: ['agent@1'],
      policyName: 'agent',
    });
    expect(byId.get(run2?.id ?? '')?.versions).toEqual(['agent@2']);
    expect(byId.get(run2?.id ?? '')?.lastMetrics?.['reward/mean']).toBeTypeOf('number');
  });

  it('gives every step in order, with staleness from the versions published before it', async () => {
    const [run1, run2] = seed.runs;
    const steps = await test.store.trainingRunSteps({ trainingRunIds: [run1?.id ?? '', run2?.id ?? ''] });
    const of = (runId: string | undefined) => steps.filter((step) => step.trainingRunId === runId);
    expect(of(run1?.id).map((step) => step.step)).toEqual(run1?.steps);
    expect(of(run2?.id).map((step) => step.step)).toEqual(run2?.steps);
    // Run 1 trained on groups sampled by v0 while v0 was the newest published: lag 0.
    expect(of(run1?.id)[0]?.staleness).toEqual({ mean: 0, max: 0 });
    // Run 2: two groups by v1 (lag 0) and one by v0 (lag 1) while v1 was newest: mean 1/3, max 1.
    const lag = of(run2?.id)[0]?.staleness;
    expect(lag?.max).toBe(1);
    expect(Math.abs((lag?.mean ?? 0) - 1 / 3)).toBeLessThan(1e-12);
    expect(of(run2?.id)[0]?.groupCount).toBe(3);
  });
});

describe('groups', () => {
  it('filters by status, environment, version, reward range and text', async () => {
    const all = await test.store.searchGroups({});
    expect(all).toHaveLength(seed.groups.length + 1);
    const running = await test.store.searchGroups({ status: ['running'] });
    expect(running.map((row) => row.group.id)).toEqual([seed.runningGroup.id]);
    expect(running[0]).toMatchObject({
      started: 3,
      ended: 0,
      rewarded: 0,
      meanReward: null,
      taskKey: 'farah',
    });

    const v1 = seed.versions[1];
    const byVersion = await test.store.searchGroups({ policyVersionId: v1?.id });
    expect(byVersion.map((row) => row.taskKey).sort()).toEqual(['dana', 'emil']);

    const text = await test.store.searchGroups({ text: 'CHEN' });
    expect(text.map((row) => row.taskKey)).toEqual(['chen']);
    const inTurns = await test.store.searchGroups({ text: 'window.__pwned' });
    expect(inTurns.map((row) => row.taskKey)).toEqual(['ada']);
    // LIKE wildcards match themselves: no task or turn holds a literal "%".
    expect(await test.store.searchGroups({ text: '%' })).toEqual([]);

    // Each row's mean is the mean of its members' rewards (final, else verifier), recomputed here.
    for (const row of all.filter((listing) => listing.rewarded > 0)) {
      const { trajectories } = await test.store.getGroup({ groupId: row.group.id });
      const rewards = trajectories.map((t) => t.finalReward ?? t.verifierReward).filter((r) => r !== null);
      const mean = rewards.reduce((sum, reward) => sum + (reward as number), 0) / rewards.length;
      expect(Math.abs((row.meanReward ?? Number.NaN) - mean)).toBeLessThan(1e-12);
    }
    const cut = all
      .map((row) => row.meanReward)
      .filter((mean): mean is number => mean !== null)
      .sort()[2] as number;
    const high = await test.store.searchGroups({ minReward: cut });
    expect(high.every((row) => (row.meanReward ?? -1) >= cut)).toBe(true);
    expect(high.length).toBe(all.filter((row) => row.meanReward !== null && row.meanReward >= cut).length);
    await expect(test.store.searchGroups({ minReward: 1, maxReward: 0 })).rejects.toThrow(/maxReward/);
  });

  it('offers the environments and versions that have groups', async () => {
    const options = await test.store.groupFilterOptions();
    expect(options.envs).toEqual(['multi-hop']);
    expect(options.versions.map((version) => version.adapterName)).toEqual(['agent@0', 'agent@1', 'agent@2']);
  });

  it('gives a running group the turns after those a reader has', async () => {
    const [first, second] = seed.runningGroup.trajectoryIds;
    const everything = await test.store.groupTurnsAfter({ groupId: seed.runningGroup.id });
    expect(everything.turns).toHaveLength(6);
    const some = await test.store.groupTurnsAfter({
      groupId: seed.runningGroup.id,
      after: { [first as string]: 1, [second as string]: 0 },
    });
    expect(some.turns.map((turn) => [turn.trajectoryId, turn.index])).toEqual(
      expect.arrayContaining([
        [second, 1],
        [seed.runningGroup.trajectoryIds[2], 0],
        [seed.runningGroup.trajectoryIds[2], 1],
      ]),
    );
    expect(some.turns).toHaveLength(3);
    expect(some.trajectories).toHaveLength(3);
  });

  it('gives the newest judge score of each trajectory with its explanation', async () => {
    const { trajectories } = await test.store.getGroup({ groupId: seed.groups[0]?.id ?? '' });
    const scores = await test.store.latestJudgeScores({ trajectoryIds: trajectories.map((t) => t.id) });
    for (const trajectory of trajectories) {
      expect(scores[trajectory.id]?.score).toBe(trajectory.judgeScore);
      expect(scores[trajectory.id]?.explanation).toMatch(/\w/);
    }
  });
});

describe('policies and experiments', () => {
  it('gives the lineage with each version parent and the state of the run that trained it', async () => {
    const [lineage] = await test.store.policyLineage();
    expect(lineage?.policy.defaultVersionId).toBe(seed.versions[0]?.id);
    expect(
      lineage?.versions.map((version) => [
        version.adapterName,
        version.parentVersionId,
        version.trainingRunStatus,
      ]),
    ).toEqual([
      ['agent@0', null, null],
      ['agent@1', seed.versions[0]?.id, 'finished'],
      ['agent@2', seed.versions[1]?.id, 'finished'],
    ]);
    expect(lineage?.defaultChanges).toEqual([]);
  });

  it('sets two versions answers to the same tasks side by side', async () => {
    const [control, candidate] = seed.arms;
    const rows = await test.store.sameTaskAnswers({
      versionIds: [control?.versionId ?? '', candidate?.versionId ?? ''],
      split: 'eval',
    });
    expect(rows).toHaveLength(10);
    expect(rows.map((row) => row.task.key)).toEqual(
      Array.from({ length: 10 }, (_, index) => `eval-${index}`),
    );
    const eval3 = rows.find((row) => row.task.key === 'eval-3');
    expect(eval3?.answers.map((answer) => [answer.reward, answer.answer])).toEqual([
      [0, 'eval-3 lives in Oslo.'],
      [1, 'eval-3 lives in Lisbon.'],
    ]);
    // Train tasks were answered by one version each: nothing in common there.
    expect(
      await test.store.sameTaskAnswers({
        versionIds: [control?.versionId ?? '', candidate?.versionId ?? ''],
        split: 'train',
      }),
    ).toEqual([]);
  });
});
