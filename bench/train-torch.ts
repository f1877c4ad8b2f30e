// npm run bench:train -- --engine torch [--models tiny,small,qwen2.5-0.5b] [--steps N] [--engine-processes N]
// The trainer's GRPO step through the engine seam on both engines (the same EngineStep: 8 sequences ×
// 128 positions, the last half trained, CISPO token-mean, LoRA r 8 on all seven projections, two
// micro-batches, AdamW), beside the same step written directly in PyTorch (torch-engine's
// direct_step.py: no protocol, whole-batch logits) and this run's matmul ceilings (torch's 1024²
// float32, and tfjs's single-thread one). ms/step is wall time seen by the caller, the protocol
// included; the goal is the engine at ≥ 0.8× the direct step's speed. tfjs is left out at the 0.5B
// shape (its wasm heap stops at 4 GB, docs/gpu-backends.md). Reports, does not assert.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { initModelDir } from '../model/init-model-dir.ts';
import { createRng } from '../model/rng.ts';
import { engineSettingsSchema } from '../trainer/engine/engine-settings.ts';
import { TfjsEngine } from '../trainer/engine/tfjs/tfjs-engine.ts';
import { findTorchPython, torchEnginePackageDir } from '../trainer/engine/torch/find-python.ts';
import { TorchEngine } from '../trainer/engine/torch/torch-engine.ts';
import type { EngineStep, TrainEngine } from '../trainer/engine/train-engine.ts';
import type { TrainingSequence } from '../trainer/engine/training-sequence.ts';
import { clipDefaults } from '../trainer/grpo/loss-config.ts';
import { flagValue } from './backend-flag.ts';
import { matmulCeiling } from './matmul-ceiling.ts';
import type { SelectedBackend } from '../model/backend.ts';

const sequencesPerStep = 8;
const positions = 128;
const rank = 8;
const projections = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const;

type Model = 'tiny' | 'small' | 'qwen2.5-0.5b';

interface Rate {
  readonly msPerStep: number;
  readonly trainedPerSecond: number;
}

/** 8 × 128 random tokens, the last half trained, sampling log-probs −3, advantages ±1. */
function batch(vocabSize: number): TrainingSequence[] {
  const rng = createRng(7);
  return Array.from({ length: sequencesPerStep }, (_, index) => {
    const targetMask = Array.from({ length: positions - 1 }, (_, at) => (at + 1 >= positions / 2 ? 1 : 0));
    return {
      trajectoryId: `b${index}`,
      groupId: null,
      ids: Array.from({ length: positions }, () => Math.floor(rng.next() * vocabSize)),
      targetMask,
      oldLogprobs: targetMask.map((bit) => (bit ? -3 : Number.NaN)),
      onPolicy: targetMask.map(() => 0),
      advantage: index % 2 === 0 ? 1 : -1,
      trainedTokens: positions / 2,
    };
  });
}

async function engineRate(engine: TrainEngine, steps: number): Promise<Rate> {
  await engine.startAdapter({
    kind: 'fresh',
    settings: {
      r: rank,
      alpha: 2 * rank,
      dropout: 0,
      targets: [...projections],
      useRslora: false,
      initA: 'kaiming-uniform',
    },
    seed: 0,
  });
  await engine.resetOptimizer({
    learningRate: 1e-5,
    beta1: 0.9,
    beta2: 0.99,
    eps: 1e-8,
    weightDecay: 0.1,
    trainA: true,
  });
  const step: EngineStep = {
    sequences: batch(engine.model.vocabSize),
    objective: {
      kind: 'grpo',
      loss: { lossKind: 'cispo', clip: clipDefaults.cispo, aggregation: 'token-mean', beta: 0 },
    },
    microBatchTokens: 4 * positions,
    maxGradNorm: 1,
    learningRate: 1e-5,
    padTokenId: 0,
  };
  await engine.step(step); // warm-up
  const started = performance.now();
  for (let i = 0; i < steps; i++) await engine.step(step);
  const seconds = (performance.now() - started) / 1000 / steps;
  return { msPerStep: seconds * 1000, trainedPerSecond: (sequencesPerStep * positions) / 2 / seconds };
}

function directRate(
  python: string,
  modelDir: string,
  steps: number,
): Rate & { matmulGflops: number; threads: number } {
  const run = spawnSync(
    python,
    [
      '-m',
      'edgerl_torch.direct_step',
      '--model',
      modelDir,
      '--sequences',
      String(sequencesPerStep),
      '--positions',
      String(positions),
      '--rank',
      String(rank),
      '--steps',
      String(steps),
    ],
    { env: { ...process.env, PYTHONPATH: torchEnginePackageDir }, encoding: 'utf8' },
  );
  if (run.status !== 0) throw new Error(`direct_step failed (${run.status}): ${run.stderr}`);
  const result = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as {
    ms_per_step: number;
    trained_tokens_per_second: number;
    matmul_gflops: number;
    threads: number;
  };
  return {
    msPerStep: result.ms_per_step,
    trainedPerSecond: result.trained_tokens_per_second,
    matmulGflops: result.matmul_gflops,
    threads: result.threads,
  };
}

export async function benchTorchTrain(backend: SelectedBackend, models: readonly Model[]): Promise<void> {
  const steps = Number(flagValue('steps') ?? 5);
  const processes = Number(flagValue('engine-processes') ?? 1);
  const python = findTorchPython(process.env.EDGERL_TORCH_PYTHON);
  const root = await mkdtemp(join(tmpdir(), 'edgerl-bench-torch-'));
  const tfjsCeiling = await matmulCeiling(backend);
  const lines = [
    `\nbench:train --engine torch (${processes} engine process(es); load average ${loadavg()[0]?.toFixed(2)} at start)`,
    `  GRPO step: ${sequencesPerStep} × ${positions} tokens (half trained), LoRA r ${rank} on all projections, CISPO token-mean, 2 micro-batches, float32 on the CPU`,
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
      const direct = directRate(python, modelDir, steps);
      torchCeiling = direct.matmulGflops;
      let tfjs: Rate | undefined;
      if (name !== 'qwen2.5-0.5b') {
        // tfjs at its best here: the backend's default gradient workers (one per core on wasm).
        const opened = await TfjsEngine.open(modelDir, { workers: null, log: () => {} });
        tfjs = await engineRate(opened, steps).finally(() => opened.close());
      }
      const show = (rate: Rate | undefined) =>
        rate
          ? `${rate.msPerStep.toFixed(0)} ms ${(rate.trainedPerSecond / 1000).toFixed(1)}k tok/s`
          : 'n/a (wasm heap)';
      lines.push(
        `  ${name.padEnd(13)} ${show(engine).padStart(22)} ${show(direct).padStart(22)} ${`${(direct.msPerStep / engine.msPerStep).toFixed(2)}×`.padStart(14)} ${show(tfjs).padStart(22)}`,
      );
      process.stderr.write(`${lines.at(-1)}\n`);
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  lines.push(
    `  matmul ceiling, 1024² float32: torch ${torchCeiling.toFixed(0)} GFLOP/s (all threads), tfjs ${tfjsCeiling.gflops.toFixed(0)} GFLOP/s (${backend.choice}, one thread)`,
    `  goal: the engine at ≥ 0.8× the direct step (engine/direct is direct ms ÷ engine ms)`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}
