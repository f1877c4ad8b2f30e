// The two engines on the same checkpoint, the same starting adapter and the same batch: per-token
// log-probs agree within 1e-5 (float32), and after one GRPO step (both losses, both aggregations, KL,
// the rollout correction, replay) and one SFT step every adapter matrix and every AdamW moment agrees
// within 1e-4 relative. The torch engine reads the tfjs-written adapter through peft's
// PeftModel.from_pretrained (real PEFT), and a tfjs-trained adapter gives the same log-probs there.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Architecture } from '../../model/hf-config.ts';
import type { TfjsEngine } from '../../trainer/engine/tfjs/tfjs-engine.ts';
import type { TorchEngine } from '../../trainer/engine/torch/torch-engine.ts';
import type { EngineStep, TrainEngine } from '../../trainer/engine/train-engine.ts';
import type { Objective } from '../../trainer/grpo/objective-loss.ts';
import { largestDifference } from '../support/max-difference.ts';
import { useWasm } from '../train/support/tiny-policy.ts';
import {
  adapterFile,
  openTfjs,
  openTorch,
  optimizerSettings,
  optimizerStateFile,
  randomSequences,
  relativeDifferences,
  writeModel,
  writeStartAdapter,
} from './support/engines.ts';

let root: string;
beforeAll(async () => {
  await useWasm();
  root = await mkdtemp(join(tmpdir(), 'edgerl-engine-parity-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe.each<Architecture>(['qwen2', 'llama', 'qwen3'])('%s: tfjs and torch', (architecture) => {
  let modelDir: string;
  let startDir: string;
  let tfjs: TfjsEngine;
  let torch: TorchEngine;

  beforeAll(async () => {
    modelDir = join(root, architecture, 'model');
    startDir = join(root, architecture, 'start');
    await writeModel(modelDir, architecture);
    await writeStartAdapter(modelDir, startDir);
    [tfjs, torch] = await Promise.all([openTfjs(modelDir), openTorch(modelDir)]);
  });
  afterAll(async () => {
    await Promise.all([tfjs?.close(), torch?.close()]);
  });

  /** Both engines from the shared start, fresh moments. */
  async function restart(): Promise<void> {
    for (const engine of [tfjs, torch] as TrainEngine[]) {
      await engine.startAdapter({ kind: 'peft', dir: startDir });
      await engine.resetOptimizer(optimizerSettings);
    }
  }

  it('starts a fresh adapter of a seed as the same weights (orthogonal A, frozen under LoRA-FA)', async () => {
    const settings = {
      r: 4,
      alpha: 8,
      dropout: 0,
      targets: ['q_proj', 'down_proj'] as const,
      useRslora: false,
    };
    for (const initA of ['kaiming-uniform', 'orthogonal'] as const) {
      const dirs = {
        tfjs: join(root, architecture, `fresh-tfjs-${initA}`),
        torch: join(root, architecture, `fresh-torch-${initA}`),
      };
      for (const [name, engine] of [
        ['tfjs', tfjs],
        ['torch', torch],
      ] as const) {
        await engine.startAdapter({
          kind: 'fresh',
          settings: { ...settings, targets: [...settings.targets], initA },
          seed: 5,
        });
        await engine.resetOptimizer({ ...optimizerSettings, trainA: false });
        await engine.save(dirs[name], { optimizer: true });
      }
      for (const file of [adapterFile, optimizerStateFile]) {
        const [worst] = await relativeDifferences(file(dirs.torch), file(dirs.tfjs));
        expect(worst?.relative ?? 0, `${initA}: ${worst?.name}`).toBe(0);
      }
    }
  });

  it('gives the same per-token log-probs, with the adapter and without (1e-5)', async () => {
    await restart();
    const sequences = randomSequences(4, { vocabSize: tfjs.model.vocabSize, seed: 11 }).map((s) => s.ids);
    for (const adapter of [true, false]) {
      const [a, b] = await Promise.all([
        tfjs.logprobs(sequences, { adapter }),
        torch.logprobs(sequences, { adapter }),
      ]);
      const { difference } = largestDifference(a.flat(), b.flat());
      expect(difference, `adapter ${adapter}: largest |Δ logprob| ${difference}`).toBeLessThanOrEqual(1e-5);
    }
  });

  const grpo = (loss: Partial<Extract<Objective, { kind: 'grpo' }>['loss']>): Objective => ({
    kind: 'grpo',
    loss: { lossKind: 'cispo', clip: { low: 0.2, high: 0.28 }, aggregation: 'token-mean', beta: 0, ...loss },
  });

  it.each<[string, Objective, { replay?: boolean; microBatchTokens?: number; weights?: boolean }]>([
    ['GRPO, CISPO, token-mean', grpo({}), {}],
    [
      'GRPO, PPO-clip, sequence-mean, k3 KL',
      grpo({ lossKind: 'ppo-clip', aggregation: 'sequence-mean', beta: 0.05 }),
      {},
    ],
    [
      'GRPO with truncated importance sampling and replay, small micro-batches',
      grpo({ correction: { kind: 'tis', cap: 2 } }),
      { replay: true, microBatchTokens: 64 },
    ],
    ['SFT with loss weights', { kind: 'sft' }, { weights: true }],
  ])('takes the same step: %s (1e-4 relative)', async (_name, objective, options) => {
    await restart();
    const reference = await tfjs.logprobs(
      randomSequences(6, { vocabSize: tfjs.model.vocabSize, seed: 5 }).map((s) => s.ids),
      { adapter: true },
    );
    const sequences = randomSequences(6, { vocabSize: tfjs.model.vocabSize, seed: 5, reference }).map((s) =>
      options.weights ? { ...s, lossWeights: s.targetMask.map((_, at) => 1 + (at % 3)) } : s,
    );
    const step: EngineStep = {
      sequences: objective.kind === 'sft' ? sequences.map((s) => ({ ...s, advantage: 1 })) : sequences,
      objective,
      microBatchTokens: options.microBatchTokens ?? 4096,
      maxGradNorm: 1,
      learningRate: 1e-3,
      padTokenId: 0,
      ...(options.replay
        ? {
            replay: {
              sequences: randomSequences(3, { vocabSize: tfjs.model.vocabSize, seed: 9 }),
              weight: 0.5,
            },
          }
        : {}),
    };
    const [a, b] = await Promise.all([tfjs.step(step), torch.step(step)]);
    expect(Math.abs(a.gradNorm - b.gradNorm) / a.gradNorm).toBeLessThan(1e-4);
    expect(b.microBatches).toHaveLength(a.microBatches.length);
    expect(b.tokens).toBe(a.tokens);
    const lossOf = (result: typeof a) => result.microBatches.reduce((sum, sums) => sum + sums.loss, 0);
    expect(Math.abs(lossOf(a) - lossOf(b))).toBeLessThan(1e-5 * Math.max(1, Math.abs(lossOf(a))));
    expect(b.replay?.sequences ?? 0).toBe(a.replay?.sequences ?? 0);

    const dirs = {
      tfjs: join(root, architecture, 'after-tfjs'),
      torch: join(root, architecture, 'after-torch'),
    };
    await Promise.all([
      tfjs.save(dirs.tfjs, { optimizer: true }),
      torch.save(dirs.torch, { optimizer: true }),
    ]);
    for (const file of [adapterFile, optimizerStateFile]) {
      const differences = await relativeDifferences(file(dirs.torch), file(dirs.tfjs));
      const [worst] = differences;
      expect(
        worst?.relative ?? 0,
        `${file(dirs.torch)}: ${worst?.name} differs by ${worst?.relative}`,
      ).toBeLessThanOrEqual(1e-4);
    }
    await Promise.all(Object.values(dirs).map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('stays together over several steps (moments, bias correction, replay; 1e-4 relative)', async () => {
    await restart();
    for (let index = 0; index < 4; index++) {
      const reference = await tfjs.logprobs(
        randomSequences(6, { vocabSize: tfjs.model.vocabSize, seed: 50 + index }).map((s) => s.ids),
        { adapter: true },
      );
      const step: EngineStep = {
        sequences: randomSequences(6, { vocabSize: tfjs.model.vocabSize, seed: 50 + index, reference }),
        objective: grpo({}),
        microBatchTokens: 64,
        maxGradNorm: 1,
        learningRate: 5e-4,
        padTokenId: 0,
        replay: {
          sequences: randomSequences(3, { vocabSize: tfjs.model.vocabSize, seed: 90 + index }),
          weight: 1,
        },
      };
      await Promise.all([tfjs.step(step), torch.step(step)]);
    }
    expect(torch.optimizerSteps).toBe(tfjs.optimizerSteps);
    const dirs = {
      tfjs: join(root, architecture, 'steps-tfjs'),
      torch: join(root, architecture, 'steps-torch'),
    };
    await Promise.all([
      tfjs.save(dirs.tfjs, { optimizer: true }),
      torch.save(dirs.torch, { optimizer: true }),
    ]);
    for (const file of [adapterFile, optimizerStateFile]) {
      const [worst] = await relativeDifferences(file(dirs.torch), file(dirs.tfjs));
      expect(worst?.relative ?? 0, `${worst?.name} differs by ${worst?.relative}`).toBeLessThanOrEqual(1e-4);
    }
  });

  it('loads a tfjs-trained adapter through PEFT and gives its log-probs', async () => {
    await restart();
    const sequences = randomSequences(4, { vocabSize: tfjs.model.vocabSize, seed: 21 });
    await tfjs.step({
      sequences,
      objective: grpo({}),
      microBatchTokens: 4096,
      maxGradNorm: 1,
      learningRate: 1e-2,
      padTokenId: 0,
    });
    const trained = join(root, architecture, 'tfjs-trained');
    await tfjs.save(trained, { optimizer: false });
    await torch.startAdapter({ kind: 'peft', dir: trained });
    const ids = sequences.map((s) => s.ids);
    const [a, b] = await Promise.all([
      tfjs.logprobs(ids, { adapter: true }),
      torch.logprobs(ids, { adapter: true }),
    ]);
    const { difference } = largestDifference(a.flat(), b.flat());
    expect(difference).toBeLessThanOrEqual(1e-5);
  });
});
