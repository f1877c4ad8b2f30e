// `edgerl train --sft` in process: chosen trajectories (verifier reward ≥ 1) and JSONL demonstrations
// are trained with next-token loss, published as a version, and leave the groups for RL; a GRPO run in
// the same output directory then continues that adapter with fresh optimiser moments.
import { tfjsEngineOf } from './support/tfjs-engine-of.ts';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../db/store.ts';
import type { ChatMessage } from '../../protocol/chat.ts';
import type { PolicyModel } from '../../model/policy-model.ts';
import type { ChatTokenizer } from '../../model/tokenizer/chat-tokenizer.ts';
import { type ServingModel, serveModel } from '../../serve/serve-model.ts';
import { buildBatch } from '../../trainer/train/build-batch.ts';
import { silentProgress } from '../../trainer/train/progress.ts';
import { readDemonstrations } from '../../trainer/train/sft-steps.ts';
import { resolveTrainConfig } from '../../trainer/train/train-config.ts';
import { runCycle, runSft, Trainer } from '../../trainer/train/trainer.ts';
import { seedGroup, seedPolicy } from './support/seed-groups.ts';
import { useTrainerRig } from './support/trainer-rig.ts';

let root: string;
let modelDir: string;
let store: Store;
let serving: ServingModel;
let sampler: PolicyModel;
let tokenizer: ChatTokenizer;

const rig = useTrainerRig('edgerl-sft-');

beforeAll(async () => {
  ({ root, modelDir, sampler, tokenizer, store } = rig);
  serving = await serveModel({ modelDir, port: 0, log: () => {} });
});

afterAll(async () => {
  await serving?.close();
});

const demonstration: ChatMessage[] = [
  { role: 'system', content: 'Answer in one word.' },
  { role: 'user', content: 'Capital of France?' },
  { role: 'assistant', content: 'Paris' },
];

describe('edgerl train --sft (in process)', () => {
  it('trains chosen trajectories and demonstrations, publishes, and leaves the groups to RL', async () => {
    const { policy, base } = await seedPolicy(store, 'agent-sft');
    const seeded = await seedGroup(store, sampler, tokenizer, {
      versionId: base.id,
      rewards: [1, 0, 1, 0],
      seed: 7,
    });
    const demos = join(root, 'demos.jsonl');
    await writeFile(demos, `${JSON.stringify({ messages: demonstration })}\n\n`);
    const outputDir = join(root, 'out');
    const common = {
      policyName: 'agent-sft',
      modelDir,
      outputDir,
      inference: { baseUrl: `${serving.url}/v1` },
      owner: 'test:sft',
      lora: { r: 4, alpha: 8, targets: ['q_proj' as const, 'v_proj' as const] },
    };
    const config = resolveTrainConfig({
      ...common,
      mode: 'sft',
      sft: {
        minReward: 1,
        rewardField: 'verifier',
        demonstrationsFile: demos,
        epochs: 2,
        sequencesPerStep: 2,
        learningRate: 1e-2,
      },
    });
    const session = await Trainer.open(config, { store, progress: silentProgress });
    let sums: { before: number[]; after: number[] };
    try {
      const inputs = [
        ...(await Promise.all(
          [seeded.trajectoryIds[0], seeded.trajectoryIds[2]].map(async (id) => {
            const { turns } = await store.getTrajectory(id as string);
            const assistant = turns.find((turn) => turn.role === 'assistant');
            return {
              trajectoryId: id as string,
              groupId: null,
              messages: [
                ...seeded.prompt,
                {
                  role: 'assistant' as const,
                  content: assistant?.content ?? '',
                  completionTokenIds: assistant?.completionTokenIds ?? [],
                },
              ],
              advantage: 1,
            };
          }),
        )),
        ...(await readDemonstrations(demos)),
      ];
      const { sequences } = buildBatch(tokenizer, inputs, {
        vocabSize: sampler.config.vocabSize,
        maxTokens: 4096,
      });
      const trainedSum = async (adapter: string | null) =>
        (
          await sampler.logprobs(
            sequences.map((s) => s.ids),
            { adapter },
          )
        ).map((row, index) =>
          row.reduce((sum, value, t) => sum + (sequences[index]?.targetMask[t] ? value : 0), 0),
        );
      const report = await runSft(session);
      expect(report).toMatchObject({ kind: 'published', adapterName: 'agent-sft@1', groupIds: [] });
      // 3 sequences (2 chosen trajectories + 1 demonstration), batches of 2, 2 epochs: 2 + 2 = 4 steps.
      expect(report.kind === 'published' && report.steps).toBe(4);
      const version = await store.getDefaultVersion({ policyId: policy.id });
      await sampler.loadAdapter('sft', version?.adapterUri as string);
      sums = { before: await trainedSum(null), after: await trainedSum('sft') };
      sampler.removeAdapter('sft');
    } finally {
      await session.close();
    }
    for (const [index, value] of sums.after.entries())
      expect(value).toBeGreaterThan(sums.before[index] as number);
    expect((await store.getGroup({ groupId: seeded.groupId })).group.status).toBe('complete');
    const [mode] = (
      await store.sql.query(
        `select r.config->>'mode' from training_runs r join policies p on p.id = r.policy_id where p.name = 'agent-sft'`,
        [],
      )
    ).rows[0] as [string];
    expect(mode).toBe('sft');

    // RL in the same directory continues from the SFT adapter, with a new run and fresh moments.
    const lines: string[] = [];
    const rl = await Trainer.open(resolveTrainConfig({ ...common, reward: 'verifier' }), {
      store,
      progress: { line: (text) => lines.push(text), microBatch() {}, stepEnd() {} },
    });
    try {
      expect(rl.position.lineage.step).toBe(4);
      expect(rl.position.pending).toBeUndefined();
      expect(rl.session.engine.optimizerSteps).toBe(0);
      expect(lines.join('\n')).toMatch(/written by sft; starting rl with fresh optimiser moments/);
      const report = await runCycle(rl);
      expect(report).toMatchObject({ kind: 'published', adapterName: 'agent-sft@2' });
      const version = await store.getDefaultVersion({ policyId: policy.id });
      expect(version?.parentVersionId).not.toBeNull();
      const [parent] = (
        await store.sql.query('select adapter_name from policy_versions where id = $1', [
          version?.parentVersionId,
        ])
      ).rows[0] as [string];
      expect(parent).toBe('agent-sft@1');
    } finally {
      await rl.close();
    }
  });

  it('with --lora-init-a orthogonal --lora-freeze-a, SFT and the RL run after it train B alone', async () => {
    await seedPolicy(store, 'agent-fa');
    const demos = join(root, 'demos-fa.jsonl');
    await writeFile(demos, `${JSON.stringify({ messages: demonstration })}\n`);
    const common = {
      policyName: 'agent-fa',
      modelDir,
      outputDir: join(root, 'out-fa'),
      inference: { baseUrl: `${serving.url}/v1` },
      owner: 'test:sft-fa',
      lora: { r: 4, alpha: 8, targets: ['q_proj' as const], initA: 'orthogonal' as const, freezeA: true },
    };
    const session = await Trainer.open(
      resolveTrainConfig({
        ...common,
        mode: 'sft',
        sft: { demonstrationsFile: demos, epochs: 2, sequencesPerStep: 1, learningRate: 1e-2 },
      }),
      { store, progress: silentProgress },
    );
    let aBefore: Float32Array;
    try {
      const engine = tfjsEngineOf(session);
      const adapter = engine.runtime.adapter(engine.adapterName);
      const pair = adapter.layers[0]?.q_proj;
      if (!pair) throw new Error('no q_proj adapter');
      expect(engine.optimizer.variables.map((v) => v.name.replace(/^.*lora_/, ''))).toEqual(['B', 'B']);
      aBefore = (await pair.aT.data()) as Float32Array;
      const bBefore = (await pair.bT.data()) as Float32Array;
      // scaling·A has orthonormal rows: each column of Aᵀ [in, r] has norm 1/scaling.
      const [input, rank] = pair.aT.shape as [number, number];
      for (let k = 0; k < rank; k++) {
        let norm = 0;
        for (let i = 0; i < input; i++) norm += (aBefore[i * rank + k] as number) ** 2;
        expect(Math.sqrt(norm) * adapter.scaling).toBeCloseTo(1, 5);
      }
      // Two steps planned (2 epochs of one demonstration); the hook stops after the first, and the
      // adapter is still checkpointed and published.
      const seen: number[] = [];
      const report = await runSft(session, {
        afterStep: async (_step, taken) => {
          seen.push(taken);
          return 'stop';
        },
      });
      expect(report).toMatchObject({ kind: 'published', adapterName: 'agent-fa@1', steps: 1 });
      expect(seen).toEqual([1]);
      expect(Array.from(await pair.aT.data())).toEqual(Array.from(aBefore));
      expect(Array.from(await pair.bT.data())).not.toEqual(Array.from(bBefore));
    } finally {
      await session.close();
    }
    // RL continues from the SFT checkpoint's adapter: A as saved, still frozen.
    const rl = await Trainer.open(resolveTrainConfig({ ...common, reward: 'verifier' }), {
      store,
      progress: silentProgress,
    });
    try {
      const engine = tfjsEngineOf(rl);
      expect(engine.optimizer.variables.map((v) => v.name.replace(/^.*lora_/, ''))).toEqual(['B', 'B']);
      const aLoaded = await engine.runtime.adapter(engine.adapterName).layers[0]?.q_proj?.aT.data();
      expect(Array.from(aLoaded as Float32Array)).toEqual(Array.from(aBefore));
    } finally {
      await rl.close();
    }
  });

  it('names the bad line of a demonstrations file', async () => {
    const path = join(root, 'bad.jsonl');
    await writeFile(
      path,
      `${JSON.stringify({ messages: demonstration })}\n{"messages": [{"role": "user"}]}\n`,
    );
    await expect(readDemonstrations(path)).rejects.toThrow(/bad\.jsonl:2: messages\.0/);
  });
});
