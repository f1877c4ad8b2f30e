// Off-policy data in full trainer cycles (tiny model, real store, the local inference endpoint for
// publication): groups sampled more than --max-off-policy-steps versions behind the head are skipped,
// marked in SQL with why and counted in the step; the rest are trained with the truncated importance
// weights, whose statistics in `training_steps` never exceed the cap and match the stored logprobs'
// offsets; with the sampler equal to the trainer (staleness 0) the correction changes the update by
// no more than float rounding, and with it off the step carries no importance statistics at all.
import { tfjsEngineOf } from './support/tfjs-engine-of.ts';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../db/store.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import type { PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { silentProgress } from '../../trainer/train/progress.ts';
import { resolveTrainConfig, type TrainConfigInput } from '../../trainer/train/train-config.ts';
import { runCycle, Trainer } from '../../trainer/train/trainer.ts';
import { maxAbsDiff } from '../support/max-difference.ts';
import { seedGroup, seedPolicy } from './support/seed-groups.ts';
import { useTrainerRig } from './support/trainer-rig.ts';

let root: string;
let modelDir: string;
let store: Store;
let serving: ServingModel;
let sampler: PolicyModel;
let tokenizer: ChatTokenizer;

const rig = useTrainerRig('edgerl-async-');

beforeAll(async () => {
  ({ root, modelDir, sampler, tokenizer, store } = rig);
  serving = await serveModel({ modelDir, port: 0, log: () => {} });
});

afterAll(async () => {
  await serving?.close();
});

function config(policyName: string, overrides: Partial<TrainConfigInput> = {}) {
  return resolveTrainConfig({
    policyName,
    modelDir,
    outputDir: join(root, `out-${policyName}`),
    inference: { baseUrl: `${serving.url}/v1`, timeoutMs: 30_000 },
    owner: `test:${policyName}`,
    reward: 'verifier',
    groupsPerStep: 3,
    workers: 1,
    loss: { learningRate: 5e-3, weightDecay: 0 },
    lora: { r: 4, alpha: 8, targets: ['q_proj', 'v_proj', 'down_proj'] },
    ...overrides,
  });
}

/** A policy whose default is version `length`, each version the child of the one before. */
async function lineage(name: string, length: number) {
  const { policy, base } = await seedPolicy(store, name);
  const versions = [base];
  for (let index = 1; index <= length; index++) {
    const version = await store.registerPolicyVersion({
      policyId: policy.id,
      parentVersionId: (versions.at(-1) as typeof base).id,
    });
    await store.publishPolicyVersion({ versionId: version.id, makeDefault: true });
    versions.push(version);
  }
  return { policy, versions };
}

async function stepRows(trainingRunId: string) {
  const { rows } = await store.sql.query(
    'select step, metrics, group_ids, started_at, finished_at from training_steps where training_run_id = $1 order by step',
    [trainingRunId],
  );
  return rows as [number, Record<string, number>, string[], Date | string | null, Date | string | null][];
}

describe('bounded staleness', () => {
  it('skips and counts groups beyond --max-off-policy-steps, and corrects the rest under the cap', async () => {
    const { policy, versions } = await lineage('stale-agent', 5); // head: stale-agent@5
    const at = (version: number) => versions[version]?.id as string;
    // Sampled by @0: 5 versions behind the head, one more than the bound of 4.
    const tooOld = await seedGroup(store, sampler, tokenizer, {
      versionId: at(0),
      rewards: [1, 0, 1, 0],
      seed: 11,
    });
    // Sampled by @1: 4 behind, within the bound. Its stored logprobs are 1 nat below the trainer's, so
    // every token's ratio is e ≈ 2.72, above the cap of 2: truncated to exactly 2.
    const old = await seedGroup(store, sampler, tokenizer, {
      versionId: at(1),
      rewards: [0, 1, 1, 0],
      seed: 12,
      logprobOffset: -1,
    });
    // Sampled by the head itself, logprobs 0.5 nat above: ratio e^−0.5 ≈ 0.61, kept as it is.
    const fresh = await seedGroup(store, sampler, tokenizer, {
      versionId: at(5),
      rewards: [1, 1, 0, 0],
      seed: 13,
      logprobOffset: 0.5,
    });
    const session = await Trainer.open(
      config('stale-agent', { offPolicy: { maxOffPolicySteps: 4, correction: 'tis', isCap: 2 } }),
      { store, progress: silentProgress },
    );
    try {
      const report = await runCycle(session);
      expect(report).toMatchObject({ kind: 'published', adapterName: 'stale-agent@6', stale: 1 });
      if (report.kind !== 'published') throw new Error('not published');
      expect(new Set(report.groupIds)).toEqual(new Set([old.groupId, fresh.groupId]));

      // The stale group: consumed by the run, never trained on, and SQL says why.
      const version = await store.getDefaultVersion({ policyId: policy.id });
      expect(version?.parentVersionId).toBe(at(5));
      const { group } = await store.getGroup({ groupId: tooOld.groupId });
      expect(group.status).toBe('trained');
      expect(group.trainingRunId).toBe(version?.trainingRunId);
      expect(group.statusReason).toBe(
        'stale: sampled by stale-agent@0, 5 version(s) behind stale-agent@5 (the head); --max-off-policy-steps is 4',
      );
      const [skipped] = (
        await store.sql.query(
          "select count(*)::int from rollout_groups where status_reason like 'stale:%' and training_run_id = $1",
          [version?.trainingRunId],
        )
      ).rows[0] as [number];
      expect(skipped).toBe(1);

      // The step: what it trained on, how stale, and the importance weights under the cap.
      const [row, ...more] = await stepRows(version?.trainingRunId as string);
      expect(more).toEqual([]);
      const [, metrics, groupIds, startedAt, finishedAt] = row as NonNullable<typeof row>;
      expect(new Set(groupIds)).toEqual(new Set([old.groupId, fresh.groupId]));
      expect(metrics['groups/stale']).toBe(1);
      expect(metrics['staleness/max']).toBe(4);
      expect(metrics['staleness/mean']).toBe(2); // four episodes 4 behind, four on the head
      const oldTokens = old.completions.reduce((sum, ids) => sum + ids.length, 0);
      const freshTokens = fresh.completions.reduce((sum, ids) => sum + ids.length, 0);
      expect(metrics.tokens).toBe(oldTokens + freshTokens);
      // The trainer starts at the base weights (B = 0), which are what sampled every stored logprob
      // before the offsets: π_trainer / π_sampler is e for the old group, e^−0.5 for the fresh one.
      expect(metrics['is/weight_max']).toBeLessThanOrEqual(2);
      expect(metrics['is/weight_max']).toBeCloseTo(2, 6);
      expect(metrics['is/truncated_fraction']).toBeCloseTo(oldTokens / (oldTokens + freshTokens), 6);
      expect(metrics['is/weight_mean']).toBeCloseTo(
        (2 * oldTokens + Math.exp(-0.5) * freshTokens) / (oldTokens + freshTokens),
        4,
      );
      expect(metrics['is/ratio_max']).toBeCloseTo(Math.E, 3);
      // The step's own ratio is against its detached logprobs: 1, nothing clipped.
      expect(metrics['ratio/mean']).toBeCloseTo(1, 6);
      expect(metrics['clip/fraction']).toBe(0);
      // When it ran, by the trainer's clock.
      expect(startedAt).not.toBeNull();
      expect(new Date(finishedAt as Date).getTime()).toBeGreaterThanOrEqual(
        new Date(startedAt as Date).getTime(),
      );
      // Each trained trajectory keeps how stale it was.
      const { trajectory } = await store.getTrajectory(old.trajectoryIds[0] as string);
      expect(trajectory.metadata).toMatchObject({ training: { staleness: 4 } });
    } finally {
      await session.close();
    }
  });

  it('a group sampled off the head lineage (a rolled-back branch) is stale whatever the bound', async () => {
    const { versions } = await lineage('branch-agent', 1); // @0 ← @1 (default)
    const base = versions[0] as (typeof versions)[number];
    // @2 descends from @0, not from the head @1.
    const sibling = await store.registerPolicyVersion({ policyId: base.policyId, parentVersionId: base.id });
    const seeded = await seedGroup(store, sampler, tokenizer, {
      versionId: sibling.id,
      rewards: [1, 0],
      seed: 21,
    });
    const session = await Trainer.open(config('branch-agent', { offPolicy: { maxOffPolicySteps: 1000 } }), {
      store,
      progress: silentProgress,
    });
    try {
      expect(await runCycle(session)).toEqual({ kind: 'idle', setAside: 0, stale: 1 });
      const { group } = await store.getGroup({ groupId: seeded.groupId });
      expect([group.status, group.statusReason]).toEqual([
        'trained',
        'stale: sampled by branch-agent@2, which is not on the lineage of branch-agent@1 (the head)',
      ]);
    } finally {
      await session.close();
    }
  });
});

describe('staleness 0', () => {
  it('with the sampler equal to the trainer the correction moves the update by float rounding only; off, no importance metrics', async () => {
    const published: Record<string, Float32Array[]> = {};
    const metricsOf: Record<string, Record<string, number>> = {};
    for (const [name, offPolicy] of [
      ['plain-agent', { correction: 'none' }],
      ['tis-agent', { correction: 'tis', isCap: 2 }],
    ] as const) {
      const { policy, base } = await seedPolicy(store, name);
      // The same seeds on each policy: the same sampled episodes, logprobs from the base weights the
      // trainer starts from (B = 0), so π_trainer / π_sampler is 1 up to the two passes' rounding.
      await seedGroup(store, sampler, tokenizer, { versionId: base.id, rewards: [1, 0, 1, 0], seed: 31 });
      await seedGroup(store, sampler, tokenizer, { versionId: base.id, rewards: [0, 0, 1, 1], seed: 32 });
      const session = await Trainer.open(config(name, { offPolicy }), {
        store,
        progress: silentProgress,
      });
      try {
        const report = await runCycle(session);
        expect(report.kind).toBe('published');
        // B starts at 0, so its values after the step are the update itself.
        const engine = tfjsEngineOf(session);
        const bs = engine.runtime.trainableVariables(engine.adapterName).filter((v) => /B$/.test(v.name));
        expect(bs.length).toBeGreaterThan(0);
        published[name] = await Promise.all(bs.map(async (v) => (await v.data()) as Float32Array));
        const version = await store.getDefaultVersion({ policyId: policy.id });
        const [row] = await stepRows(version?.trainingRunId as string);
        metricsOf[name] = (row as NonNullable<typeof row>)[1];
      } finally {
        await session.close();
      }
    }
    const plain = metricsOf['plain-agent'] as Record<string, number>;
    const tis = metricsOf['tis-agent'] as Record<string, number>;
    expect([plain['staleness/max'], plain['groups/stale'], tis['staleness/max']]).toEqual([0, 0, 0]);
    expect(Object.keys(plain).filter((key) => key.startsWith('is/'))).toEqual([]);
    // Every weight is 1 within the sampler's float rounding: nothing truncated.
    expect(tis['is/truncated_fraction']).toBe(0);
    expect(Math.abs((tis['is/weight_mean'] as number) - 1)).toBeLessThan(1e-4);
    expect(tis.loss).toBeCloseTo(plain.loss as number, 5);
    expect(tis['grad/norm']).toBeCloseTo(plain['grad/norm'] as number, 4);
    // The B matrices after one AdamW step from 0: lr 5e-3 · ĝ/(|ĝ| + ε) per element, so a relative
    // gradient change of 1e-4 moves an element by far less than 1e-6; 1e-5 leaves room for elements
    // whose gradient is near 0 (their update is sensitive to rounding).
    const a = published['plain-agent'] as Float32Array[];
    const b = published['tis-agent'] as Float32Array[];
    expect(a.length).toBe(b.length);
    const largest = Math.max(...a.map((values, index) => maxAbsDiff(values, b[index] as Float32Array)));
    expect(largest).toBeLessThan(1e-5);
    // The comparison is of a real update (each element near ±lr), not of zeros.
    expect(Math.max(...a.map((values) => Math.max(...Array.from(values, Math.abs))))).toBeGreaterThan(1e-3);
  });
});
