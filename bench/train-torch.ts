// npm run bench:train -- --engine torch [--models tiny,small,qwen2.5-0.5b] [--steps N] [--engine-processes N]
// The trainer's GRPO step through the engine seam on both engines (the same EngineStep: 8 sequences ×
// 128 positions, the last half trained, CISPO token-mean, LoRA r 8 on all seven projections, two
// micro-batches, AdamW), beside the same step written directly in PyTorch (torch-engine's
// direct_step.py: no protocol, whole-batch logits) and this run's matmul ceilings (torch's 1024²
// float32, and tfjs's single-thread one). ms/step is wall time seen by the caller, the protocol
// included; the goal is the engine at ≥ 0.8× the direct step's speed. tfjs is left out at the 0.5B
// shape (its wasm heap stops at 4 GB, docs/gpu-backends.md). Reports, does not assert.
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SelectedBackend } from '../model/backend.ts';
import { initModelDir } from '../model/init-model-dir.ts';
import { engineSettingsSchema } from '../trainer/engine/engine-settings.ts';
import { TfjsEngine } from '../trainer/engine/tfjs/tfjs-engine.ts';
import { findTorchPython } from '../trainer/engine/torch/find-python.ts';
import { TorchEngine } from '../trainer/engine/torch/torch-engine.ts';
import type { TrainEngine } from '../trainer/engine/train-engine.ts';
import { flagValue } from './backend-flag.ts';
import { directStep, freshAdapter, grpoStep } from './grpo-step-setup.ts';
import { matmulCeiling } from './matmul-ceiling.ts';

const shape = { sequences: 8, positions: 128, microBatchTokens: 4 * 128 };
const rank = 8;
const trained = (shape.sequences * shape.positions) / 2;

type Model = 'tiny' | 'small' | 'qwen2.5-0.5b';

interface Rate {
  readonly msPerStep: number;
  readonly trainedPerSecond: number;
}

async function engineRate(engine: TrainEngine, steps: number): Promise<Rate> {
  await freshAdapter(engine, rank);
  const step = grpoStep(engine.model.vocabSize, shape, -3);
  await engine.step(step); // warm-up
  const started = performance.now();
  for (let i = 0; i < steps; i++) await engine.step(step);
  const seconds = (performance.now() - started) / 1000 / steps;
  return { msPerStep: seconds * 1000, trainedPerSecond: trained / seconds };
}

export async function benchTorchTrain(backend: SelectedBackend, models: readonly Model[]): Promise<void> {
  const steps = Number(flagValue('steps') ?? 5);
  const processes = Number(flagValue('engine-processes') ?? 1);
  const python = findTorchPython(process.env.EDGERL_TORCH_PYTHON);
  const root = await mkdtemp(join(tmpdir(), 'edgerl-bench-torch-'));
  const tfjsCeiling = await matmulCeiling(backend);
  const lines = [
    `\nbench:train --engine torch (${processes} engine process(es); load average ${loadavg()[0]?.toFixed(2)} at start)`,
    `  GRPO step: ${shape.sequences} × ${shape.positions} tokens (half trained), LoRA r ${rank} on all projections, CISPO token-mean, 2 micro-batches, float32 on the CPU`,
    `  ${'model'.padEnd(13)} ${'torch engine'.padStart(22)} ${'direct PyTorch'.padStart(22)} ${'engine/direct'.padStart(14)} ${`tfjs (${backend.choice})`.padStart(22)}`,
  ];
  let torchCeiling = 0;
  try {
    for (const name of models) {
      const modelDir = join(root, name);
      await initModelDir(modelDir, { preset: name, seed: 1, dtype: 'F32' });
      const settings = engineSettingsSchema.parse({
        kind: 'torch',
        python,
        device: 'cpu',
        dtype: 'float32',
        gradientCheckpointing: false,
        processes,
      });
      const torch = await TorchEngine.open(modelDir, settings, { log: () => {}, seed: 0 });
      const engine = await engineRate(torch, steps).finally(() => torch.close());
      const direct = directStep(python, modelDir, [
        ...['--sequences', String(shape.sequences), '--positions', String(shape.positions)],
        ...['--rank', String(rank), '--steps', String(steps)],
      ]);
      if (typeof direct === 'string') throw new Error(direct);
      torchCeiling = direct.matmul_gflops;
      let tfjs: Rate | undefined;
      if (name !== 'qwen2.5-0.5b') {
        // tfjs at its best here: the backend's default gradient workers (one per core on wasm).
        const opened = await TfjsEngine.open(modelDir, { workers: null, log: () => {} });
        tfjs = await engineRate(opened, steps).finally(() => opened.close());
      }
      const perSecond = (rate: number) => (rate >= 1000 ? `${(rate / 1000).toFixed(1)}k` : rate.toFixed(0));
      const show = (rate: Rate | undefined) =>
        rate
          ? `${rate.msPerStep.toFixed(0)} ms ${perSecond(rate.trainedPerSecond)} tok/s`
          : 'n/a (wasm heap)';
      const directRate = {
        msPerStep: direct.ms_per_step,
        trainedPerSecond: direct.trained_tokens_per_second,
      };
      lines.push(
        `  ${name.padEnd(13)} ${show(engine).padStart(22)} ${show(directRate).padStart(22)} ${`${(direct.ms_per_step / engine.msPerStep).toFixed(2)}×`.padStart(14)} ${show(tfjs).padStart(22)}`,
      );
      process.stderr.write(`${lines.at(-1)}\n`);
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  lines.push(
    `  matmul ceiling, 1024² float32: torch ${torchCeiling.toFixed(0)} GFLOP/s (all threads), tfjs ${tfjsCeiling.gflops.toFixed(0)} GFLOP/s (${backend.choice}, one thread)`,
    '  goal: the engine at ≥ 0.8× the direct step (engine/direct is direct ms ÷ engine ms)',
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}
