// Full trainer cycles in process, against the embedded store and the local inference endpoint
// (`serveModel` on port 0) with the tiny model: verifier rewards end in a published, servable adapter
// that moved the positive trajectories' logprobs up and the negative ones' down; RULER rewards go
// through the judge double; a failed publication leaves the previous version serving, says why, and
// is finished by the next run without training again. One lineage per policy: a leased policy refuses a
// second session, and a checkpoint behind the default restarts from the default.
import { tfjsEngineOf } from './support/tfjs-engine-of.ts';
import { readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../db/store.ts';
import type { PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { createJudgeClient } from '../../trainer/ruler/judge-client.ts';
import { resolveRulerConfig } from '../../trainer/ruler/ruler-config.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import { buildBatch } from '../../trainer/train/build-batch.ts';
import { readOptimizerMoments } from '../../trainer/engine/optimizer-state-file.ts';
import { storedMessages } from '../../trainer/train/stored-messages.ts';
import { silentProgress } from '../../trainer/train/progress.ts';
import { resolveTrainConfig, type TrainConfigInput } from '../../trainer/train/train-config.ts';
import { runCycle, Trainer } from '../../trainer/train/trainer.ts';
import { PolicyLeasedError, type TrainerDeps } from '../../trainer/train/trainer-session.ts';
import { answerWith, type JudgeServer, startJudgeServer } from '../doubles/judge-server.ts';
import { seedGroup, seedPolicy } from './support/seed-groups.ts';
import { useTrainerRig } from './support/trainer-rig.ts';

let root: string;
let modelDir: string;
let store: Store;
let serving: ServingModel;
let sampler: PolicyModel;
let tokenizer: ChatTokenizer;
let judge: JudgeServer;

const rig = useTrainerRig('edgerl-train-');

beforeAll(async () => {
  ({ root, modelDir, sampler, tokenizer, store } = rig);
  serving = await serveModel({ modelDir, port: 0, log: () => {} });
  judge = await startJudgeServer();
});

afterAll(async () => {
  await serving?.close();
  await judge?.close();
});

function config(policyName: string, overrides: Partial<TrainConfigInput> = {}) {
  return resolveTrainConfig({
    policyName,
    modelDir,
    outputDir: join(root, `out-${policyName}`),
    inference: { baseUrl: `${serving.url}/v1`, timeoutMs: 30_000 },
    owner: `test:${policyName}`,
    reward: 'verifier',
    groupsPerStep: 4,
    loss: { learningRate: 5e-3, weightDecay: 0 },
    lora: { r: 4, alpha: 8, targets: ['q_proj', 'v_proj', 'down_proj'] },
    ...overrides,
  });
}

function deps(extra: Partial<TrainerDeps> = {}): TrainerDeps {
  return { store, progress: silentProgress, ...extra };
}

async function row(sql: string, params: unknown[]): Promise<unknown[]> {
  return (await store.sql.query(sql, params)).rows[0] as unknown[];
}

/** Σ of trained-token logprobs per trajectory, under `adapter` (null: the base model). */
async function trainedLogprobSums(
  model: PolicyModel,
  trajectoryIds: readonly string[],
  adapter: string | null,
) {
  const trajectories = await Promise.all(
    trajectoryIds.map(async (id) => {
      const { trajectory, turns } = await store.getTrajectory(id);
      return {
        trajectoryId: id,
        groupId: null,
        messages: storedMessages({ ...trajectory, turns }),
        advantage: 1,
      };
    }),
  );
  const { sequences } = buildBatch(tokenizer, trajectories, {
    vocabSize: model.config.vocabSize,
    maxTokens: 4096,
  });
  const logprobs = await model.logprobs(
    sequences.map((sequence) => sequence.ids),
    { adapter },
  );
  return sequences.map((sequence, index) =>
    (logprobs[index] as number[]).reduce((sum, value, t) => sum + (sequence.targetMask[t] ? value : 0), 0),
  );
}

describe('edgerl train --once (in process)', () => {
  it('trains on verifier rewards and publishes a servable adapter; groups without spread are consumed as no-signal', async () => {
    const { policy, base } = await seedPolicy(store, 'agent-v');
    // Group 1 rewards 1, 0, 1, 0: mean 0.5, advantages +0.5, −0.5, +0.5, −0.5 (no std division).
    const signal = await seedGroup(store, sampler, tokenizer, {
      versionId: base.id,
      rewards: [1, 0, 1, 0],
      seed: 1,
    });
    // Group 2 rewards all 1: no spread, no gradient.
    const flat = await seedGroup(store, sampler, tokenizer, {
      versionId: base.id,
      rewards: [1, 1, 1, 1],
      seed: 2,
    });
    const session = await Trainer.open(config('agent-v'), deps());
    try {
      const report = await runCycle(session);
      expect(report).toMatchObject({
        kind: 'published',
        adapterName: 'agent-v@1',
        version: 1,
        steps: 1,
        resumed: false,
      });
      if (report.kind !== 'published') throw new Error('not published');
      expect(new Set(report.groupIds)).toEqual(new Set([signal.groupId, flat.groupId]));

      // The store: version 1 published and default, child of the base, trained by the run.
      const version = await store.getDefaultVersion({ policyId: policy.id });
      expect(version).toMatchObject({ id: report.versionId, status: 'published', parentVersionId: base.id });
      expect(version?.adapterUri).toBe(join(session.session.config.servingDir, 'agent-v@1'));
      const groups = await Promise.all(
        [signal, flat].map(async (seeded) => (await store.getGroup({ groupId: seeded.groupId })).group),
      );
      expect(groups.map((group) => [group.status, group.statusReason, group.trainingRunId])).toEqual([
        ['trained', null, version?.trainingRunId],
        ['trained', 'no-signal', version?.trainingRunId],
      ]);
      // One step record. Rewards 1,0,1,0,1,1,1,1: mean 6/8 = 0.75, population std √(0.75·0.25) ≈ 0.433;
      // trained advantages ±0.5, so |A| mean 0.5; tokens = every sampled id of group 1 (eos included).
      const [metrics, stepGroups] = (await row(
        'select metrics, group_ids from training_steps where training_run_id = $1 and step = 1',
        [version?.trainingRunId],
      )) as [Record<string, number>, string[]];
      expect(metrics['reward/mean']).toBeCloseTo(0.75, 10);
      expect(metrics['reward/std']).toBeCloseTo(Math.sqrt(0.75 * 0.25), 10);
      expect(metrics['advantage/abs_mean']).toBeCloseTo(0.5, 10);
      expect(metrics['groups/used']).toBe(1);
      expect(metrics['groups/no_signal']).toBe(1);
      expect(metrics.tokens).toBe(signal.completions.reduce((sum, ids) => sum + ids.length, 0));
      expect(metrics['turns/sampled']).toBe(4);
      expect(metrics['tokens/on_policy']).toBe(0);
      expect(metrics['grad/norm']).toBeGreaterThan(0);
      expect(metrics['tokens/per_second']).toBeGreaterThan(0);
      expect(stepGroups).toEqual([signal.groupId]);
      // Drift is recorded per trained trajectory.
      const { trajectory } = await store.getTrajectory(signal.trajectoryIds[0] as string);
      expect(trajectory.metadata).toMatchObject({ training: { sampledTurns: 1, retokenizedTurns: 0 } });

      // Checkpoint 0001: PEFT files, optimizer moments after one step, committed.
      const checkpoint = join(session.session.config.outputDir, 'checkpoints', '0001');
      expect((await readdir(checkpoint)).sort()).toEqual([
        'adapter_config.json',
        'adapter_model.safetensors',
        'committed.json',
        'optimizer.safetensors',
        'probe.json',
        'publication.json',
        'trainer_state.json',
      ]);
      expect((await readOptimizerMoments(checkpoint)).step).toBe(1);

      // Servable: listed, and a completion through it answers.
      const models = (await (await fetch(`${serving.url}/v1/models`)).json()) as { data: { id: string }[] };
      expect(models.data.map((entry) => entry.id)).toContain('agent-v@1');
      const completion = await fetch(`${serving.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'agent-v@1', messages: signal.prompt, max_tokens: 3 }),
      });
      expect(completion.status).toBe(200);

      // The published adapter raised the positive trajectories' logprobs and lowered the negative ones'.
      await sampler.loadAdapter('published-v1', version?.adapterUri as string);
      const before = await trainedLogprobSums(sampler, signal.trajectoryIds, null);
      const after = await trainedLogprobSums(sampler, signal.trajectoryIds, 'published-v1');
      sampler.removeAdapter('published-v1');
      const delta = after.map((value, index) => value - (before[index] as number));
      expect((delta[0] as number) + (delta[2] as number)).toBeGreaterThan(0);
      expect((delta[1] as number) + (delta[3] as number)).toBeLessThan(0);

      // Nothing left: the next cycle is idle.
      expect(await runCycle(session)).toEqual({ kind: 'idle', setAside: 0, stale: 0 });
    } finally {
      await session.close();
    }
  });

  it('warms the rate up over fresh moments and never trains on validation or eval groups', async () => {
    const { base } = await seedPolicy(store, 'agent-w');
    const train = await seedGroup(store, sampler, tokenizer, {
      versionId: base.id,
      rewards: [1, 0],
      seed: 21,
    });
    const held = await Promise.all(
      (['validation', 'eval'] as const).map((split, index) =>
        seedGroup(store, sampler, tokenizer, {
          versionId: base.id,
          rewards: [1, 0],
          seed: 22 + index,
          split,
        }),
      ),
    );
    const session = await Trainer.open(config('agent-w', { lrSchedule: { warmupSteps: 4 } }), deps());
    try {
      const report = await runCycle(session);
      if (report.kind !== 'published') throw new Error(`not published: ${report.kind}`);
      expect(report.groupIds).toEqual([train.groupId]);
      // Step 1 of a 4-step warm-up: a quarter of --lr (5e-3).
      const [metrics] = (await row(
        'select s.metrics from training_steps s join policy_versions v on v.training_run_id = s.training_run_id where v.id = $1',
        [report.versionId],
      )) as [Record<string, number>];
      expect(metrics.lr).toBeCloseTo(5e-3 / 4, 15);
      for (const group of held)
        expect((await store.getGroup({ groupId: group.groupId })).group.status).toBe('complete');
      expect(await runCycle(session)).toEqual({ kind: 'idle', setAside: 0, stale: 0 });
    } finally {
      await session.close();
    }
  });

  it("--replay trains an earlier group's best success beside the next step, never the step's own", async () => {
    const { base } = await seedPolicy(store, 'agent-replay');
    const first = await seedGroup(store, sampler, tokenizer, {
      versionId: base.id,
      rewards: [0, 1],
      seed: 31,
    });
    const session = await Trainer.open(
      config('agent-replay', { groupsPerStep: 1, replay: { sequences: 4 } }),
      deps(),
    );
    try {
      const stepMetrics = async (versionId: string) =>
        (
          (await row(
            `select s.metrics from training_steps s join policy_versions v on v.training_run_id = s.training_run_id
             where v.id = $1 order by s.step desc limit 1`,
            [versionId],
          )) as [Record<string, number>]
        )[0];
      const one = await runCycle(session);
      if (one.kind !== 'published') throw new Error(`not published: ${one.kind}`);
      // Nothing was trained before: no replay, and no replay metrics.
      expect((await stepMetrics(one.versionId))['replay/sequences']).toBeUndefined();

      const second = await seedGroup(store, sampler, tokenizer, {
        versionId: one.versionId,
        rewards: [1, 0],
        seed: 32,
      });
      const before = await trainedLogprobSums(
        tfjsEngineOf(session).runtime,
        [first.trajectoryIds[1] as string],
        tfjsEngineOf(session).adapterName,
      );
      const two = await runCycle(session);
      if (two.kind !== 'published') throw new Error(`not published: ${two.kind}`);
      expect(two.groupIds).toEqual([second.groupId]);
      const metrics = await stepMetrics(two.versionId);
      // The first group's success alone: its failure is below --replay-min-reward 1, and the second group is the step's.
      expect(metrics['replay/sequences']).toBe(1);
      // Its token-mean NLL at the step's start: −Σ logprob over its one sampled turn's tokens.
      const { turns } = await store.getTrajectory(first.trajectoryIds[1] as string);
      const tokens = turns.find((turn) => turn.role === 'assistant')?.completionTokenIds?.length ?? 0;
      expect(metrics['replay/loss']).toBeCloseTo(-(before[0] as number) / tokens, 4);
    } finally {
      await session.close();
    }
  });

  it('scores with RULER (the judge double) before training', async () => {
    const { policy, base } = await seedPolicy(store, 'agent-r');
    const seeded = await seedGroup(store, sampler, tokenizer, {
      versionId: base.id,
      rewards: [0, 0, 0, 0],
      seed: 3,
    });
    judge.enqueue(answerWith((block) => block.position / 4)); // 0, 0.25, 0.5, 0.75 by position
    const rulerConfig = resolveRulerConfig({ baseUrl: judge.baseUrl, model: 'judge-double' });
    const session = await Trainer.open(
      config('agent-r', { reward: 'ruler' }),
      deps({ judge: { config: rulerConfig, client: createJudgeClient(rulerConfig) } }),
    );
    try {
      const report = await runCycle(session);
      expect(report).toMatchObject({ kind: 'published', adapterName: 'agent-r@1' });
      judge.verify();
      expect(judge.requests).toHaveLength(1);
      const { group, trajectories } = await store.getGroup({ groupId: seeded.groupId });
      expect(group.status).toBe('trained');
      // The verifier rewards (all 0) are ignored in 'ruler' mode: the judge's scores are the rewards.
      expect(trajectories.map((t) => t.finalReward).sort()).toEqual([0, 0.25, 0.5, 0.75]);
      expect(trajectories.every((t) => t.judgeScore === t.finalReward)).toBe(true);
      expect((await store.getDefaultVersion({ policyId: policy.id }))?.adapterName).toBe('agent-r@1');
    } finally {
      await session.close();
    }
  });

  it('a failed publication leaves the previous version serving and says why; the next run finishes it', async () => {
    const { policy, base } = await seedPolicy(store, 'agent-f');
    const seeded = await seedGroup(store, sampler, tokenizer, {
      versionId: base.id,
      rewards: [1, 0, 0, 1],
      seed: 4,
    });
    // The server is told to load from a directory it cannot see: load_lora_adapter answers 404.
    const broken = config('agent-f', { serverAdapterDir: join(root, 'nowhere') });
    const first = await Trainer.open(broken, deps());
    try {
      const report = await runCycle(first);
      expect(report).toMatchObject({ kind: 'publish-failed', adapterName: 'agent-f@1', stage: 'load' });
    } finally {
      await first.close();
    }
    expect((await store.getDefaultVersion({ policyId: policy.id }))?.id).toBe(base.id);
    const [status, metadata] = (await row(
      `select status, metadata from policy_versions where adapter_name = 'agent-f@1'`,
      [],
    )) as [string, Record<string, unknown>];
    expect(status).toBe('training');
    expect(String(metadata.publishError)).toMatch(/^load: POST \/load_lora_adapter answered 404/);
    expect((await store.getGroup({ groupId: seeded.groupId })).group.status).toBe('complete');
    const checkpoint = join(broken.outputDir, 'checkpoints', '0001');
    expect(existsSync(join(checkpoint, 'committed.json'))).toBe(false);

    // Fixed configuration, same output directory: the checkpoint is published, no new step is taken.
    const second = await Trainer.open(config('agent-f'), deps());
    try {
      const report = await runCycle(second);
      expect(report).toMatchObject({ kind: 'published', adapterName: 'agent-f@1', resumed: true, steps: 1 });
    } finally {
      await second.close();
    }
    expect((await store.getDefaultVersion({ policyId: policy.id }))?.adapterName).toBe('agent-f@1');
    expect((await store.getGroup({ groupId: seeded.groupId })).group.status).toBe('trained');
    expect(existsSync(join(broken.outputDir, 'checkpoints', '0002'))).toBe(false);
    const [steps] = (await row(
      'select count(*)::int from training_steps s join policy_versions v on v.training_run_id = s.training_run_id where v.adapter_name = $1',
      ['agent-f@1'],
    )) as [number];
    expect(steps).toBe(1);
  });
});

/** A trainer `trainer` of its own (owner and output directory) on `policyName`. */
function lineageConfig(policyName: string, trainer: string) {
  return config(policyName, {
    owner: `test:${trainer}`,
    outputDir: join(root, `out-${policyName}-${trainer}`),
  });
}

async function trainOnce(policyName: string, trainer: string, lines: string[] = []) {
  const progress = { line: (text: string) => lines.push(text), microBatch: () => {}, stepEnd: () => {} };
  const session = await Trainer.open(lineageConfig(policyName, trainer), { store, progress });
  try {
    return await runCycle(session);
  } finally {
    await session.close();
  }
}

describe('one lineage per policy', () => {
  it('refuses a second session on a leased policy, not on another policy', async () => {
    await seedPolicy(store, 'lease-a');
    await seedPolicy(store, 'lease-b');
    const holder = await Trainer.open(lineageConfig('lease-a', 'one'), {
      store,
      progress: silentProgress,
    });
    try {
      const refused = await Trainer.open(lineageConfig('lease-a', 'two'), {
        store,
        progress: silentProgress,
      }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(PolicyLeasedError);
      expect(String((refused as Error).message)).toContain('is being trained by test:one');
      const other = await Trainer.open(lineageConfig('lease-b', 'two'), {
        store,
        progress: silentProgress,
      });
      await other.close();
    } finally {
      await holder.close();
    }
    // Closed, the lease is free again.
    const next = await Trainer.open(lineageConfig('lease-a', 'two'), {
      store,
      progress: silentProgress,
    });
    await next.close();
  });

  it('a trainer whose checkpoint is behind the default continues from the default', async () => {
    const { base } = await seedPolicy(store, 'chain');
    const seed = async (n: number) =>
      (await seedGroup(store, sampler, tokenizer, { versionId: base.id, rewards: [1, 0, 0, 1], seed: n }))
        .groupId;
    const first = await seed(1);
    expect(await trainOnce('chain', 'x')).toMatchObject({ kind: 'published', adapterName: 'chain@1' });
    const second = await seed(2);
    expect(await trainOnce('chain', 'y')).toMatchObject({ kind: 'published', adapterName: 'chain@2' });
    const third = await seed(3);
    const lines: string[] = [];
    // x's checkpoint holds chain@1; the default is chain@2 (y's).
    expect(await trainOnce('chain', 'x', lines)).toMatchObject({ kind: 'published', adapterName: 'chain@3' });
    expect(lines.join('\n')).toContain('not chain@2 (the default); starting from the default');
    const versions = (
      await store.sql.query(
        `select v.id, v.parent_version_id, v.metadata->'groupIds' from policy_versions v
         join policies p on p.id = v.policy_id where p.name = 'chain' order by v.version`,
        [],
      )
    ).rows;
    for (const [index, version] of versions.entries()) {
      if (index > 0) expect(version[1]).toBe(versions[index - 1]?.[0]);
    }
    expect(versions.slice(1).map((version) => version[2])).toEqual([[first], [second], [third]]);
    expect((await store.getDefaultVersion({ policyName: 'chain' }))?.id).toBe(versions.at(-1)?.[0]);
  });
});
