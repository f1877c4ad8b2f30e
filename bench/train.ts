// npm run bench:train [-- --backend NAME] [--models tiny,small,qwen2.5-0.5b] — throughput of the
// trainer's optimiser step (trainer/train/train-step.ts: micro-batched forward + backward into the LoRA
// adapter, the GRPO CISPO loss, global-norm clip, AdamW) on the tiny and small presets, and on a
// hardware GPU Qwen2.5-0.5B's shape (bench/bench-models.ts): processed and trained tokens per second
// and achieved GFLOP/s, beside the same backend's plain matmul rate measured in the same run (the
// ceiling, bench/matmul-ceiling.ts). Backend: --backend, else EDGERL_BACKEND, else the first
// available (bench/backend-flag.ts). Reports, does not assert.
//
// FLOPs are counted analytically as in bench/model.ts (2 per multiply-add, matmuls only; elementwise
// ops, softmax, norms and the optimiser are not counted). Per token with keys S = T (full score
// matrix), L layers, P projection weights per layer, H heads of size hd, LoRA rank r on projections
// with (in, out):  forward = L·(2P + 4·S·H·hd + Σ 2r(in+out)) + 2·D·V,
//                  backward = L·(2P + 8·S·H·hd + Σ 4r(in+out)) + 4·D·V.
import { AdamW } from '../trainer/grpo/adamw.ts';
import { clipDefaults } from '../trainer/grpo/loss-config.ts';
import { type ModelConfig, projections } from '../model/hf-config.ts';
import { PolicyModel } from '../model/policy-model.ts';
import { projectionShape } from '../model/weight-names.ts';
import type { TrainingSequence } from '../trainer/train/build-batch.ts';
import { trainStep } from '../trainer/train/train-step.ts';
import { flagValue, selectBenchBackend } from './backend-flag.ts';
import { benchModels, benchWeights, describeBenchModel } from './bench-models.ts';
import { matmulCeiling } from './matmul-ceiling.ts';

const sequencesPerStep = 8;
const positions = 128;
/** The last half of each sequence is "assistant" (trained); the first half is prompt. */
const trainedPerSequence = positions / 2;
const rank = 8;
const microBatchTokens = 4 * positions; // two micro-batches of 4 sequences: exercises accumulation

function flopsPerToken(config: ModelConfig, keys: number): number {
  const { hiddenSize: d, vocabSize: v, numHeads: h, headDim: hd, numLayers: l } = config;
  let weights = 0;
  let lora = 0;
  for (const projection of projections) {
    const [out, input] = projectionShape(config, projection);
    weights += out * input;
    lora += 2 * rank * (input + out);
  }
  const attention = 4 * keys * h * hd;
  const forward = l * (2 * weights + attention + lora) + 2 * d * v;
  const backward = l * (2 * weights + 2 * attention + 2 * lora) + 4 * d * v;
  return forward + backward;
}

function syntheticBatch(vocabSize: number, seed: number): TrainingSequence[] {
  return Array.from({ length: sequencesPerStep }, (_, row) => {
    const ids = Array.from({ length: positions }, (_, t) => (seed + row * 131 + t * 7919) % vocabSize);
    const targetMask = Array.from({ length: positions - 1 }, (_, t) =>
      t >= positions - 1 - trainedPerSequence ? 1 : 0,
    );
    return {
      trajectoryId: `bench-${row}`,
      groupId: null,
      ids,
      targetMask,
      // Recorded logprobs near a uniform model's, so ratios sit near the clip band's middle.
      oldLogprobs: targetMask.map((bit) => (bit ? -Math.log(vocabSize) : Number.NaN)),
      onPolicy: targetMask.map(() => 0),
      advantage: row % 2 === 0 ? 0.5 : -0.5,
      trainedTokens: trainedPerSequence,
    };
  });
}

const backend = await selectBenchBackend();
const matmulGflops = (await matmulCeiling(backend)).gflops;

const rows: string[][] = [];
for (const entry of benchModels(backend, flagValue('models'))) {
  console.log(describeBenchModel(entry));
  const { name: preset, config } = entry;
  const vocabSize = config.vocabSize;
  const model = PolicyModel.fromHostWeights(config, benchWeights(config, 1));
  model.addAdapter('bench', { r: rank, alpha: 2 * rank, targets: [...projections], initLoraWeights: false });
  const optimizer = new AdamW(model.trainableVariables('bench'), {
    learningRate: 1e-5,
    beta1: 0.9,
    beta2: 0.99,
    eps: 1e-8,
    weightDecay: 0.1,
  });
  const options = {
    objective: {
      kind: 'grpo',
      loss: { lossKind: 'cispo', clip: clipDefaults.cispo, aggregation: 'token-mean', beta: 0 },
    },
    microBatchTokens,
    maxGradNorm: 1,
    learningRate: 1e-5,
    padTokenId: 0,
  } as const;
  await trainStep(model, 'bench', optimizer, syntheticBatch(vocabSize, 0), options); // warm-up
  const minMs = preset === 'tiny' ? 4000 : 8000;
  let steps = 0;
  const start = performance.now();
  do {
    await trainStep(model, 'bench', optimizer, syntheticBatch(vocabSize, steps + 1), options);
    steps += 1;
  } while (performance.now() - start < minMs);
  const seconds = (performance.now() - start) / 1000 / steps;
  const processed = sequencesPerStep * positions;
  const trained = sequencesPerStep * trainedPerSequence;
  // Logprobs are of positions 1..T−1; every position runs forward and backward.
  const gflops = (flopsPerToken(config, positions) * sequencesPerStep * (positions - 1)) / seconds / 1e9;
  rows.push([
    preset,
    `${sequencesPerStep}×${positions}`,
    (seconds * 1000).toFixed(0),
    (processed / seconds).toFixed(0),
    (trained / seconds).toFixed(0),
    gflops.toFixed(2),
    `${((100 * gflops) / matmulGflops).toFixed(1)} %`,
  ]);
  optimizer.dispose();
  model.dispose();
}

const header = ['preset', 'B×T', 'ms/step', 'tokens/s', 'trained tok/s', 'GFLOP/s', 'of matmul'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] as number)).join('  ');
console.log(line(header));
for (const row of rows) console.log(line(row));
console.log(
  `One optimiser step = ${sequencesPerStep} sequences of ${positions} tokens (last ${trainedPerSequence} trained) in ` +
    `micro-batches of ${microBatchTokens} padded tokens; LoRA rank ${rank} on all 7 projections; matmul FLOPs only.`,
);
