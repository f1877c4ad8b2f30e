// npm run bench:torch-step [-- --preset qwen2.5-0.5b|qwen3-0.6b] [--sequences 8] [--positions 512] [--rank 16]
// One GRPO step of the torch engine at a real model's shape on this machine's CPU (random weights,
// float32): by default Qwen2.5-0.5B, 8 sequences × 512 tokens (the last half trained), LoRA r 16 on all
// seven projections, gradient checkpointing and the chunked vocabulary log-softmax on. Prints seconds per
// step, trained tokens/s, achieved GFLOP/s and the engine's peak memory, beside baselines from the same
// run: torch's 1024² float32 matmul rate, and a naive direct PyTorch step (whole-batch logits, every
// activation kept: torch-engine's direct_step.py) at 2 sequences, since at 8 it needs more memory than
// the machine has. Reports, does not assert.
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { initModelDir } from '../model/init-model-dir.ts';
import { parameterCount } from '../model/init-model.ts';
import { isRealPreset, type RealPreset, realPresetConfig } from '../model/real-presets.ts';
import { createRng } from '../model/rng.ts';
import { engineSettingsSchema } from '../trainer/engine/engine-settings.ts';
import { findTorchPython, torchEnginePackageDir } from '../trainer/engine/torch/find-python.ts';
import { TorchEngine } from '../trainer/engine/torch/torch-engine.ts';
import type { EngineStep } from '../trainer/engine/train-engine.ts';
import type { TrainingSequence } from '../trainer/engine/training-sequence.ts';
import { clipDefaults } from '../trainer/grpo/loss-config.ts';
import { flagValue } from './backend-flag.ts';

const preset = flagValue('preset') ?? 'qwen2.5-0.5b';
if (!isRealPreset(preset)) throw new Error(`--preset must be a real preset, got ${preset}`);
const sequences = Number(flagValue('sequences') ?? 8);
const positions = Number(flagValue('positions') ?? 512);
const rank = Number(flagValue('rank') ?? 16);
const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;

/** Matmul FLOPs of the step (2 per multiply-add): every position forward, backward to the inputs, and
 *  recomputed once under checkpointing; LoRA's own matmuls and the head only on trained positions. */
function stepFlops(name: RealPreset, trained: number, checkpointing: boolean): number {
  const config = realPresetConfig(name);
  const embedding = config.vocabSize * config.hiddenSize;
  const layerWeights = parameterCount(config) - embedding * (config.tieWordEmbeddings ? 1 : 2);
  const forward = 2 * layerWeights * sequences * positions;
  const head = 2 * embedding * trained;
  return forward * (checkpointing ? 3 : 2) + head * 2;
}

function batch(vocabSize: number): TrainingSequence[] {
  const rng = createRng(3);
  return Array.from({ length: sequences }, (_, index) => {
    const targetMask = Array.from({ length: positions - 1 }, (_, at) => (at + 1 >= positions / 2 ? 1 : 0));
    return {
      trajectoryId: `s${index}`,
      groupId: null,
      ids: Array.from({ length: positions }, () => Math.floor(rng.next() * vocabSize)),
      targetMask,
      oldLogprobs: targetMask.map((bit) => (bit ? -12 : Number.NaN)),
      onPolicy: targetMask.map(() => 0),
      advantage: index % 2 === 0 ? 1 : -1,
      trainedTokens: positions / 2,
    };
  });
}

const python = findTorchPython(process.env.EDGERL_TORCH_PYTHON);
const root = await mkdtemp(join(tmpdir(), 'edgerl-torch-step-'));
try {
  const modelDir = join(root, preset);
  await initModelDir(modelDir, { preset, seed: 1, dtype: 'F32' });
  const lines = [`\nbench:torch-step ${preset} (load average ${loadavg()[0]?.toFixed(2)} at start)`];

  const naive = spawnSync(
    python,
    [
      '-m',
      'edgerl_torch.direct_step',
      '--model',
      modelDir,
      '--sequences',
      '2',
      '--positions',
      String(positions),
      '--rank',
      String(rank),
      '--steps',
      '1',
      '--micro-batch-sequences',
      '2',
    ],
    { env: { ...process.env, PYTHONPATH: torchEnginePackageDir }, encoding: 'utf8' },
  );
  const direct =
    naive.status === 0
      ? (JSON.parse(naive.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, number>)
      : undefined;

  const settings = engineSettingsSchema.parse({ kind: 'torch', python, device: 'cpu', dtype: 'float32' });
  const engine = await TorchEngine.open(modelDir, settings, {
    log: (line) => process.stderr.write(`${line}\n`),
    seed: 0,
  });
  try {
    await engine.startAdapter({
      kind: 'fresh',
      settings: {
        r: rank,
        alpha: 2 * rank,
        dropout: 0,
        targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
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
      // Two micro-batches of 4 × 512: one forward and backward each.
      microBatchTokens: (sequences / 2) * positions,
      maxGradNorm: 1,
      learningRate: 1e-5,
      padTokenId: 0,
    };
    const times: number[] = [];
    for (let i = 0; i < 2; i++) {
      const started = performance.now();
      const result = await engine.step(step);
      times.push((performance.now() - started) / 1000);
      process.stderr.write(
        `step ${i + 1}: ${times.at(-1)?.toFixed(1)} s (engine ${result.seconds.toFixed(1)} s), grad norm ${result.gradNorm.toFixed(3)}\n`,
      );
    }
    const peak = await engine.peakMemoryBytes();
    const seconds = Math.min(...times);
    const trained = (sequences * positions) / 2;
    const gflops = stepFlops(preset, trained, true) / seconds / 1e9;
    lines.push(
      `  engine: ${sequences} × ${positions} tokens, LoRA r ${rank} on all projections, gradient checkpointing, chunked log-softmax (1,024 rows)`,
      `    ${seconds.toFixed(1)} s/step (first ${times[0]?.toFixed(1)} s), ${(trained / seconds).toFixed(0)} trained tok/s, ${gflops.toFixed(0)} GFLOP/s achieved; peak RSS ${gib(peak)}`,
      direct
        ? `  baseline, naive direct step at 2 × ${positions} (whole-batch logits, every activation kept): ${((direct.ms_per_step ?? 0) / 1000).toFixed(1)} s/step, peak RSS ${gib(direct.peak_rss_bytes ?? 0)}; torch matmul ceiling ${direct.matmul_gflops?.toFixed(0)} GFLOP/s (1024² float32, ${direct.threads} threads)`
        : `  baseline, naive direct step at 2 × ${positions}: failed (${naive.status ?? naive.signal}): ${naive.stderr.slice(-300)}`,
    );
  } finally {
    await engine.close();
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await rm(root, { recursive: true, force: true });
}
