// For the torch tests: the tiny model written as `edgerl model init` writes it, both engines opened on
// it, a shared starting adapter (random A and B, saved as PEFT by the tfjs runtime), training
// sequences drawn from a seed, and the relative difference of two adapter or optimiser files.
// Test-only.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Architecture, projections } from '../../../model/hf-config.ts';
import { loadModel } from '../../../model/policy-model.ts';
import { createRng } from '../../../model/rng.ts';
import { decodeSafetensors } from '../../../model/safetensors.ts';
import { TfjsEngine } from '../../../trainer/engine/tfjs/tfjs-engine.ts';
import { TorchEngine } from '../../../trainer/engine/torch/torch-engine.ts';
import type { OptimizerSettings } from '../../../trainer/engine/train-engine.ts';
import type { TrainingSequence } from '../../../trainer/engine/training-sequence.ts';
import { engineSettingsSchema } from '../../../trainer/engine/engine-settings.ts';
import { torchPython } from '../../support/test-engine.ts';
import { writeTinyModelDir } from '../../train/support/tiny-policy.ts';
import { initModelDir } from '../../../model/init-model-dir.ts';

export const optimizerSettings: OptimizerSettings = {
  learningRate: 1e-3,
  beta1: 0.9,
  beta2: 0.99,
  eps: 1e-8,
  weightDecay: 0.1,
  trainA: true,
};

export async function writeModel(dir: string, architecture: Architecture = 'qwen2'): Promise<void> {
  if (architecture === 'qwen2') await writeTinyModelDir(dir);
  else await initModelDir(dir, { preset: 'tiny', architecture, seed: 1, dtype: 'F32' });
}

/** An adapter on every projection with A and B both random (B = 0 would hide half the math), as PEFT files. */
export async function writeStartAdapter(modelDir: string, dir: string, seed = 3): Promise<void> {
  const model = await loadModel(modelDir);
  try {
    model.addAdapter(
      'start',
      { r: 4, alpha: 8, initLoraWeights: false, targets: [...projections] },
      { seed },
    );
    await model.saveAdapter('start', dir);
  } finally {
    model.dispose();
  }
}

export function openTfjs(modelDir: string): Promise<TfjsEngine> {
  return TfjsEngine.open(modelDir, { workers: 1, log: () => {} });
}

export function openTorch(
  modelDir: string,
  options: {
    readonly processes?: number;
    readonly sharding?: 'none' | 'fsdp';
    readonly log?: (line: string) => void;
  } = {},
): Promise<TorchEngine> {
  const settings = engineSettingsSchema.parse({
    kind: 'torch',
    python: torchPython(),
    device: 'cpu',
    dtype: 'float32',
    processes: options.processes ?? 1,
    sharding: options.sharding ?? 'none',
  });
  return TorchEngine.open(modelDir, settings, { log: options.log ?? (() => {}), seed: 0 });
}

/**
 * `count` sequences of random tokens: a prompt of 3–8 untrained tokens, then trained ones with sampling
 * log-probs `reference + noise` (so ratios are not 1), a few trained on-policy (no log-prob), advantages ±.
 */
export function randomSequences(
  count: number,
  options: { readonly vocabSize: number; readonly seed: number; readonly reference?: readonly number[][] },
): TrainingSequence[] {
  const rng = createRng(options.seed);
  return Array.from({ length: count }, (_, index) => {
    const length = 10 + Math.floor(rng.next() * 22);
    const prompt = 3 + Math.floor(rng.next() * 6);
    const ids = Array.from({ length }, () => Math.floor(rng.next() * options.vocabSize));
    const targetMask: number[] = Array.from({ length: length - 1 }, (_, at) => (at + 1 >= prompt ? 1 : 0));
    const onPolicy: number[] = targetMask.map((bit) => (bit === 1 && rng.next() < 0.15 ? 1 : 0));
    const oldLogprobs = targetMask.map((bit, at) =>
      bit === 1 && onPolicy[at] === 0
        ? (options.reference?.[index]?.[at] ?? -6) + 0.3 * rng.normal()
        : Number.NaN,
    );
    return {
      trajectoryId: `t${index}`,
      groupId: null,
      ids,
      targetMask,
      oldLogprobs,
      onPolicy,
      advantage: index % 2 === 0 ? 1 + rng.next() : -1 - rng.next(),
      trainedTokens: targetMask.reduce((sum, bit) => sum + bit, 0),
    };
  });
}

/** Each tensor of two safetensors files: ‖a − b‖ / ‖b‖ (b the reference), the largest first. */
export async function relativeDifferences(
  file: string,
  reference: string,
): Promise<{ name: string; relative: number }[]> {
  const [a, b] = await Promise.all(
    [file, reference].map(
      async (path) => decodeSafetensors(new Uint8Array(await readFile(path)), path).tensors,
    ),
  );
  const names = [...(b as Map<string, unknown>).keys()];
  if ((a as Map<string, unknown>).size !== names.length) {
    throw new Error(
      `${file} holds ${(a as Map<string, unknown>).size} tensors, ${reference} ${names.length}`,
    );
  }
  return names
    .map((name) => {
      const x = a?.get(name)?.data;
      const y = b?.get(name)?.data;
      if (!x || !y) throw new Error(`${name} is missing from ${x ? reference : file}`);
      let difference = 0;
      let norm = 0;
      for (let i = 0; i < y.length; i++) {
        difference += ((x[i] as number) - (y[i] as number)) ** 2;
        norm += (y[i] as number) ** 2;
      }
      return { name, relative: Math.sqrt(difference) / Math.max(Math.sqrt(norm), 1e-30) };
    })
    .sort((p, q) => q.relative - p.relative);
}

export const adapterFile = (dir: string) => join(dir, 'adapter_model.safetensors');
export const optimizerStateFile = (dir: string) => join(dir, 'optimizer.safetensors');
