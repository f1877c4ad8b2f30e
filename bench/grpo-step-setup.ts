// What the engine benches share: a fresh LoRA adapter on all seven projections with AdamW, a GRPO step
// (CISPO, token-mean) over random sequences whose last half is trained, and the direct PyTorch step
// (torch-engine's direct_step.py) run as a child. Bench-only.
import { spawnSync } from 'node:child_process';
import { projections } from '../model/hf-config.ts';
import { createRng } from '../model/rng.ts';
import { torchEnginePackageDir } from '../trainer/engine/torch/find-python.ts';
import type { EngineStep, TrainEngine } from '../trainer/engine/train-engine.ts';
import type { TrainingSequence } from '../trainer/engine/training-sequence.ts';
import { clipDefaults } from '../trainer/grpo/loss-config.ts';

/** A fresh adapter of rank `rank` (alpha 2r) on every projection, and AdamW over it. */
export async function freshAdapter(engine: TrainEngine, rank: number): Promise<void> {
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
}

/** `sequences` × `positions` random tokens, the last half trained with sampling log-probs `oldLogprob`, advantages ±1. */
export function grpoStep(
  vocabSize: number,
  shape: { readonly sequences: number; readonly positions: number; readonly microBatchTokens: number },
  oldLogprob: number,
): EngineStep {
  const rng = createRng(7);
  const { sequences, positions } = shape;
  const batch: TrainingSequence[] = Array.from({ length: sequences }, (_, index) => {
    const targetMask = Array.from({ length: positions - 1 }, (_, at) => (at + 1 >= positions / 2 ? 1 : 0));
    return {
      trajectoryId: `b${index}`,
      groupId: null,
      ids: Array.from({ length: positions }, () => Math.floor(rng.next() * vocabSize)),
      targetMask,
      oldLogprobs: targetMask.map((bit) => (bit ? oldLogprob : Number.NaN)),
      onPolicy: targetMask.map(() => 0),
      advantage: index % 2 === 0 ? 1 : -1,
      trainedTokens: positions / 2,
    };
  });
  return {
    sequences: batch,
    objective: {
      kind: 'grpo',
      loss: { lossKind: 'cispo', clip: clipDefaults.cispo, aggregation: 'token-mean', beta: 0 },
    },
    microBatchTokens: shape.microBatchTokens,
    maxGradNorm: 1,
    learningRate: 1e-5,
    padTokenId: 0,
  };
}

export interface DirectStep {
  readonly ms_per_step: number;
  readonly trained_tokens_per_second: number;
  readonly matmul_gflops: number;
  readonly threads: number;
  readonly peak_rss_bytes: number;
}

/** The same step written directly in PyTorch (torch-engine/edgerl_torch/direct_step.py), or why it failed. */
export function directStep(python: string, modelDir: string, flags: readonly string[]): DirectStep | string {
  const run = spawnSync(python, ['-m', 'edgerl_torch.direct_step', '--model', modelDir, ...flags], {
    env: { ...process.env, PYTHONPATH: torchEnginePackageDir },
    encoding: 'utf8',
  });
  if (run.status !== 0) return `direct_step exited ${run.status ?? run.signal}: ${run.stderr.slice(-400)}`;
  return JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as DirectStep;
}
