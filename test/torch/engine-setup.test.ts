// What a trainer says when the torch engine cannot run: no Python where it was told to look
// (engine-setup, naming the fix), and a Python whose peft is too old (engine-requirements, naming the
// package and the version found). And `--engine-processes 2` (two gloo ranks), with the model whole on
// each or sharded over them (`--engine-sharding fsdp`), through the trainer's client takes the same step
// as one process.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineSettingsSchema } from '../../trainer/engine/engine-settings.ts';
import { TorchEngine } from '../../trainer/engine/torch/torch-engine.ts';
import type { EngineStep } from '../../trainer/engine/train-engine.ts';
import { torchPython } from '../support/test-engine.ts';
import { useWasm } from '../train/support/tiny-policy.ts';
import {
  adapterFile,
  openTorch,
  optimizerSettings,
  optimizerStateFile,
  randomSequences,
  relativeDifferences,
  writeModel,
  writeStartAdapter,
} from './support/engines.ts';

let root: string;
let modelDir: string;
beforeAll(async () => {
  await useWasm();
  root = await mkdtemp(join(tmpdir(), 'edgerl-engine-setup-'));
  modelDir = join(root, 'model');
  await writeModel(modelDir);
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const settings = (python: string) => engineSettingsSchema.parse({ kind: 'torch', python, device: 'cpu' });

describe('the torch engine cannot start', () => {
  it('says how to set it up when there is no such Python', async () => {
    const open = TorchEngine.open(modelDir, settings(join(root, 'no-such-python')), {
      log: () => {},
      seed: 0,
    });
    await expect(open).rejects.toMatchObject({
      code: 'engine-setup',
      message: expect.stringMatching(/npm run setup:torch/),
    });
  });

  it('names a package that is too old, and the version it found', async () => {
    // A dist-info ahead of the real one on the path: importlib.metadata reads peft 0.1.0.
    const fake = join(root, 'old-peft');
    await mkdir(join(fake, 'peft-0.1.0.dist-info'), { recursive: true });
    await writeFile(
      join(fake, 'peft-0.1.0.dist-info', 'METADATA'),
      'Metadata-Version: 2.1\nName: peft\nVersion: 0.1.0\n',
    );
    const saved = process.env.PYTHONPATH;
    process.env.PYTHONPATH = fake;
    try {
      const open = TorchEngine.open(modelDir, settings(torchPython()), { log: () => {}, seed: 0 });
      await expect(open).rejects.toMatchObject({
        code: 'engine-requirements',
        message: expect.stringMatching(/peft.*0\.1\.0/),
      });
    } finally {
      if (saved === undefined) delete process.env.PYTHONPATH;
      else process.env.PYTHONPATH = saved;
    }
  });
});

describe('--engine-processes 2', () => {
  it('takes the same step as one process (two gloo ranks, whole or sharded, 1e-5 relative)', async () => {
    const start = join(root, 'start');
    await writeStartAdapter(modelDir, start);
    const dirs = { one: join(root, 'one'), two: join(root, 'two'), fsdp: join(root, 'fsdp') };
    for (const [name, processes, sharding] of [
      ['one', 1, 'none'],
      ['two', 2, 'none'],
      ['fsdp', 2, 'fsdp'],
    ] as const) {
      const engine = await openTorch(modelDir, { processes, sharding });
      try {
        expect([engine.info.worldSize, engine.info.sharding]).toEqual([processes, sharding]);
        await engine.startAdapter({ kind: 'peft', dir: start });
        await engine.resetOptimizer(optimizerSettings);
        const step: EngineStep = {
          sequences: randomSequences(5, { vocabSize: engine.model.vocabSize, seed: 4 }),
          objective: {
            kind: 'grpo',
            loss: {
              lossKind: 'ppo-clip',
              clip: { low: 0.2, high: 0.28 },
              aggregation: 'token-mean',
              beta: 0,
            },
          },
          // Five micro-batches for two ranks: one rank takes three.
          microBatchTokens: 32,
          maxGradNorm: 1,
          learningRate: 1e-3,
          padTokenId: 0,
        };
        await engine.step(step);
        await engine.save(dirs[name], { optimizer: true });
      } finally {
        await engine.close();
      }
    }
    for (const file of [adapterFile, optimizerStateFile]) {
      for (const dir of [dirs.two, dirs.fsdp]) {
        const [worst] = await relativeDifferences(file(dir), file(dirs.one));
        expect(worst?.relative ?? 0, `${dir}: ${worst?.name}`).toBeLessThanOrEqual(1e-5);
      }
    }
  });
});
