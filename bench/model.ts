// npm run bench:model — throughput of the model runtime on the active tfjs backend: tokens/s and
// achieved GFLOP/s for a forward pass (per-token logprobs, the trainer's scoring path) and for
// forward + backward (gradients of those logprobs into a LoRA adapter), for the tiny and small
// presets, next to the plain 1024×1024 matmul rate of the same backend measured in the same run.
// Reports, does not assert. Backend: EDGERL_BACKEND (node-gpu | node | wasm | cpu) or the default order.
//
// FLOPs are counted analytically, as executed (2 per multiply-add; elementwise ops, softmax and norms
// are not counted). Per token, with L layers, P projection weights per layer, S = T keys (the full
// T×T score matrix is computed, then masked), H heads of size hd, LoRA rank r on every projection:
//   forward  = L·(2P + 4·S·H·hd + Σ_proj 2r(in+out)) + 2·D·V
//   backward = L·(2P + 8·S·H·hd + Σ_proj 4r(in+out)) + 4·D·V
// Backward needs no weight gradients for the frozen base (only dX = dY·Wᵀ, 2P), but attention
// needs gradients for both operands of both products (2× its forward), LoRA for activations and
// for A and B (2×), and the logprob head recomputes the logits before multiplying back (2·2DV).
import * as tf from '@tensorflow/tfjs';
import { selectBackend } from '../trainer/model/backend.ts';
import type { ModelConfig } from '../trainer/model/hf-config.ts';
import { projections } from '../trainer/model/hf-config.ts';
import { type ModelPreset, presetConfig, randomWeights } from '../trainer/model/init-model.ts';
import { PolicyModel } from '../trainer/model/policy-model.ts';
import { tinyTokenizerFiles } from '../trainer/model/tokenizer/tiny-tokenizer.ts';
import { projectionShape } from '../trainer/model/weight-names.ts';

const batch = 4;
const positions = 128;
const rank = 8;
const seconds = (ms: number) => ms / 1000;

async function timeIt(fn: () => tf.Tensor | tf.Tensor[], minMs: number): Promise<number> {
  tf.dispose(fn()); // warm-up: kernel setup, first allocations
  let runs = 0;
  const start = performance.now();
  do {
    const out = fn();
    await (Array.isArray(out) ? out[0] : out)?.data(); // wait for the work to finish
    tf.dispose(out);
    runs += 1;
  } while (performance.now() - start < minMs);
  return (performance.now() - start) / runs;
}

function flopsPerToken(config: ModelConfig, keys: number): { forward: number; backward: number } {
  const { hiddenSize: d, vocabSize: v, numHeads: h, headDim: hd, numLayers: l } = config;
  let projectionWeights = 0;
  let lora = 0;
  for (const projection of projections) {
    const [out, input] = projectionShape(config, projection);
    projectionWeights += out * input;
    lora += 2 * rank * (input + out);
  }
  const attention = 4 * keys * h * hd;
  return {
    forward: l * (2 * projectionWeights + attention + lora) + 2 * d * v,
    backward: l * (2 * projectionWeights + 2 * attention + 2 * lora) + 4 * d * v,
  };
}

const backend = await selectBackend({ requested: process.env.EDGERL_BACKEND });
const n = 1024;
const a = tf.randomNormal([n, n]);
const b = tf.randomNormal([n, n]);
const matmulMs = await timeIt(() => tf.matMul(a, b), 2000);
const matmulGflops = (2 * n ** 3) / seconds(matmulMs) / 1e9;
tf.dispose([a, b]);
console.log(
  `backend ${backend.choice}: plain ${n}×${n} matmul ${matmulMs.toFixed(1)} ms → ${matmulGflops.toFixed(2)} GFLOP/s (the ceiling)`,
);

const vocabSize = tinyTokenizerFiles().vocabSize;
const rows: string[][] = [];
for (const preset of ['tiny', 'small'] as ModelPreset[]) {
  const config = presetConfig(preset, 'qwen2', {
    vocabSize,
    bosTokenId: null,
    eosTokenIds: [],
    padTokenId: null,
  });
  const model = PolicyModel.fromHostWeights(config, randomWeights(config, 1));
  model.addAdapter('bench', { r: rank, alpha: 2 * rank, targets: [...projections], initLoraWeights: false });
  const variables = model.trainableVariables('bench');
  const ids = tf.tensor2d(
    Array.from({ length: batch * positions }, (_, i) => (i * 7919) % vocabSize),
    [batch, positions],
    'int32',
  );
  const tokens = batch * (positions - 1); // logprobs are of positions 1..T−1
  const flops = flopsPerToken(config, positions);
  const forwardMs = await timeIt(() => model.forwardLogprobs(ids, { adapter: 'bench' }), 3000);
  const trainMs = await timeIt(() => {
    const { value, grads } = tf.variableGrads(
      () => tf.mean(model.forwardLogprobs(ids, { adapter: 'bench' })) as tf.Scalar,
      variables,
    );
    return [value, ...Object.values(grads)];
  }, 6000);
  for (const [pass, ms, perToken] of [
    ['forward', forwardMs, flops.forward],
    ['forward+backward', trainMs, flops.forward + flops.backward],
  ] as const) {
    const gflops = (perToken * tokens) / seconds(ms) / 1e9;
    rows.push([
      preset,
      pass,
      `${batch}×${positions}`,
      ms.toFixed(1),
      (tokens / seconds(ms)).toFixed(0),
      gflops.toFixed(2),
      `${((100 * gflops) / matmulGflops).toFixed(1)} %`,
    ]);
  }
  ids.dispose();
  model.dispose();
}

const header = ['preset', 'pass', 'B×T', 'ms/batch', 'tokens/s', 'GFLOP/s', 'of matmul'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] as number)).join('  ');
console.log(line(header));
for (const row of rows) console.log(line(row));
console.log(
  `LoRA rank ${rank} on all 7 projections; vocabulary ${vocabSize}; matmul FLOPs only (see the header of bench/model.ts).`,
);
