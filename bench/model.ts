// npm run bench:model [-- --backend NAME] [--models tiny,small,qwen2.5-0.5b] — throughput of the model
// runtime on one tfjs backend: tokens/s and achieved GFLOP/s for a forward pass (per-token logprobs,
// the trainer's scoring path), forward + backward (gradients of those logprobs into a LoRA adapter),
// and KV-cached decoding (model/decode-batch.ts, the inference endpoint's step), next to the
// backend's plain matmul rate measured in the same run (bench/matmul-ceiling.ts). Models: the tiny and
// small presets, and on a hardware GPU Qwen2.5-0.5B's shape with random weights (bench/bench-models.ts).
// Backend: --backend, else EDGERL_BACKEND, else the first available. Reports, does not assert.
//
// FLOPs are counted analytically, as executed (2 per multiply-add; elementwise ops, softmax and norms
// are not counted). Per token, with L layers, P projection weights per layer, S keys (T for a full
// pass, which computes the whole T×T score matrix and masks it; the cached length when decoding),
// H heads of size hd, LoRA rank r on every projection:
//   forward  = L·(2P + 4·S·H·hd + Σ_proj 2r(in+out)) + 2·D·V
//   backward = L·(2P + 8·S·H·hd + Σ_proj 4r(in+out)) + 2·D·V (+ 2·D·V when the logits span chunks)
// Backward needs no weight gradients for the frozen base (only dX = dY·Wᵀ, 2P), but attention
// needs gradients for both operands of both products (2× its forward), LoRA for activations and
// for A and B (2×), and the logprob head multiplies the softmax back (2DV), first recomputing the
// logits (another 2DV) when they did not fit one chunk (model/token-logprobs.ts).
import * as tf from '@tensorflow/tfjs';
import { DecodeBatch } from '../model/decode-batch.ts';
import { type ModelConfig, projections } from '../model/hf-config.ts';
import { PolicyModel } from '../model/policy-model.ts';
import { chunkRows } from '../model/token-logprobs.ts';
import { projectionShape } from '../model/weight-names.ts';
import { flagValue, selectBenchBackend } from './backend-flag.ts';
import { benchModels, benchWeights, describeBenchModel } from './bench-models.ts';
import { matmulCeiling, timeTensorOp } from './matmul-ceiling.ts';

const batch = 4;
const positions = 128;
/** Decoding: `batch` rows with prompts of `promptTokens`, then `decodeSteps` cached steps. */
const promptTokens = 64;
const decodeSteps = 32;
const rank = 8;
const seconds = (ms: number) => ms / 1000;

function flopsPerToken(config: ModelConfig, keys: number, rows = 1): { forward: number; backward: number } {
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
    backward: l * (2 * projectionWeights + 2 * attention + 2 * lora) + (rows > chunkRows(v) ? 4 : 2) * d * v,
  };
}

/** ms per decode step and FLOPs per step, averaged over rounds of `decodeSteps` steps (prefill not timed). */
async function timeDecode(model: PolicyModel, minMs: number): Promise<{ ms: number; flops: number }> {
  const adapter = model.adapter('bench');
  const vocab = model.config.vocabSize;
  const prompt = (row: number) =>
    Array.from({ length: promptTokens }, (_, i) => (row * 31 + i * 7919) % vocab);
  // Cached length during step i (0-based) is promptTokens + i + 1 keys (the fed token included).
  let flopsPerRound = 0;
  for (let i = 0; i < decodeSteps; i++)
    flopsPerRound += batch * flopsPerToken(model.config, promptTokens + i + 1).forward;
  let steps = 0;
  let elapsed = 0;
  let rounds = 0;
  for (let round = 0; round === 0 || elapsed < minMs; round++) {
    const decoding = new DecodeBatch(model.decoder);
    await decoding.add(Array.from({ length: batch }, (_, row) => ({ prompt: prompt(row), adapter })));
    const fed = Array.from({ length: batch }, (_, row) => (row * 17 + round) % vocab);
    const start = performance.now();
    for (let i = 0; i < decodeSteps; i++) await decoding.step(fed); // each step reads its logits back
    const ms = performance.now() - start;
    decoding.dispose();
    if (round === 0) continue; // warm-up round: shader compilation, first allocations
    elapsed += ms;
    steps += decodeSteps;
    rounds += 1;
  }
  return { ms: elapsed / steps, flops: (flopsPerRound * rounds) / steps };
}

const backend = await selectBenchBackend();
const ceiling = await matmulCeiling(backend);
const models = benchModels(backend, flagValue('models'));

const rows: string[][] = [];
const addRow = (name: string, pass: string, shape: string, ms: number, tokens: number, flops: number) => {
  const gflops = flops / seconds(ms) / 1e9;
  rows.push([
    name,
    pass,
    shape,
    ms.toFixed(1),
    (tokens / seconds(ms)).toFixed(0),
    gflops.toFixed(2),
    `${((100 * gflops) / ceiling.gflops).toFixed(1)} %`,
  ]);
};
for (const entry of models) {
  console.log(describeBenchModel(entry));
  const { config } = entry;
  const model = PolicyModel.fromHostWeights(config, benchWeights(config, 1));
  model.addAdapter('bench', { r: rank, alpha: 2 * rank, targets: [...projections], initLoraWeights: false });
  const variables = model.trainableVariables('bench');
  const ids = tf.tensor2d(
    Array.from({ length: batch * positions }, (_, i) => (i * 7919) % config.vocabSize),
    [batch, positions],
    'int32',
  );
  const tokens = batch * (positions - 1); // logprobs are of positions 1..T−1
  const flops = flopsPerToken(config, positions, tokens);
  const forwardMs = await timeTensorOp(() => model.forwardLogprobs(ids, { adapter: 'bench' }), 3000);
  addRow(entry.name, 'forward', `${batch}×${positions}`, forwardMs, tokens, flops.forward * tokens);
  const trainMs = await timeTensorOp(() => {
    const { value, grads } = tf.variableGrads(
      () => tf.mean(model.forwardLogprobs(ids, { adapter: 'bench' })) as tf.Scalar,
      variables,
    );
    return [value, ...Object.values(grads)];
  }, 6000);
  addRow(
    entry.name,
    'forward+backward',
    `${batch}×${positions}`,
    trainMs,
    tokens,
    (flops.forward + flops.backward) * tokens,
  );
  const decode = await timeDecode(model, 3000);
  addRow(
    entry.name,
    'decode step',
    `${batch}×(${promptTokens}+${decodeSteps})`,
    decode.ms,
    batch,
    decode.flops,
  );
  ids.dispose();
  model.dispose();
}

const header = ['model', 'pass', 'B×T', 'ms/call', 'tokens/s', 'GFLOP/s', 'of ceiling'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] as number)).join('  ');
console.log(line(header));
for (const row of rows) console.log(line(row));
console.log(
  `LoRA rank ${rank} on all 7 projections; matmul FLOPs only (see the header of bench/model.ts); ` +
    `decode tokens/s counts the ${batch} tokens each step produces, the host reading every step's logits.`,
);
