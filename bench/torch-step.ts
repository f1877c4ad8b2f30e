// npm run bench:torch-step [-- --preset qwen2.5-0.5b|qwen3-0.6b] [--sequences 8] [--positions 512] [--rank 16]
// One GRPO step of the torch engine at a real model's shape on this machine's CPU (random weights,
// float32): by default Qwen2.5-0.5B, 8 sequences × 512 tokens (the last half trained), LoRA r 16 on all
// seven projections, gradient checkpointing and the chunked vocabulary log-softmax on. Prints seconds per
// step, trained tokens/s, achieved GFLOP/s and the engine's peak memory, beside baselines from the same
// run: torch's 1024² float32 matmul rate, and a naive direct PyTorch step (whole-batch logits, every
// activation kept: torch-engine's direct_step.py) at 2 sequences, since at 8 it needs more memory than
// the machine has. Reports, does not assert.
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { initModelDir } from '../model/init-model-dir.ts';
import { parameterCount } from '../model/init-model.ts';
import { isRealPreset, type RealPreset, realPresetConfig } from '../model/real-presets.ts';
import { engineSettingsSchema } from '../trainer/engine/engine-settings.ts';
import { findTorchPython } from '../trainer/engine/torch/find-python.ts';
import { TorchEngine } from '../trainer/engine/torch/torch-engine.ts';
import { flagValue } from './backend-flag.ts';
import { directStep, freshAdapter, grpoStep } from './grpo-step-setup.ts';

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

const python = findTorchPython(process.env.EDGERL_TORCH_PYTHON);
const root = await mkdtemp(join(tmpdir(), 'edgerl-torch-step-'));
try {
  const modelDir = join(root, preset);
  await initModelDir(modelDir, { preset, seed: 1, dtype: 'F32' });
  const lines = [`\nbench:torch-step ${preset} (load average ${loadavg()[0]?.toFixed(2)} at start)`];

  const direct = directStep(python, modelDir, [
    ...['--sequences', '2', '--positions', String(positions), '--rank', String(rank)],
    ...['--steps', '1', '--micro-batch-sequences', '2'],
  ]);

  const settings = engineSettingsSchema.parse({ kind: 'torch', python, device: 'cpu', dtype: 'float32' });
  const engine = await TorchEngine.open(modelDir, settings, {
    log: (line) => process.stderr.write(`${line}\n`),
    seed: 0,
  });
  try {
    await freshAdapter(engine, rank);
    // Two micro-batches of half the sequences each: one forward and backward each.
    const step = grpoStep(
      engine.model.vocabSize,
      { sequences, positions, microBatchTokens: (sequences / 2) * positions },
      -12,
    );
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
      typeof direct === 'string'
        ? `  baseline, naive direct step at 2 × ${positions}: failed: ${direct}`
        : `  baseline, naive direct step at 2 × ${positions} (whole-batch logits, every activation kept): ${(direct.ms_per_step / 1000).toFixed(1)} s/step, peak RSS ${gib(direct.peak_rss_bytes)}; torch matmul ceiling ${direct.matmul_gflops.toFixed(0)} GFLOP/s (1024² float32, ${direct.threads} threads)`,
    );
  } finally {
    await engine.close();
  }
  process.stdout.write(`${lines.join('\n')}\n`);
} finally {
  await rm(root, { recursive: true, force: true });
}
