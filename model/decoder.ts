// The decoder-only transformer forward pass of Llama and Qwen2 (transformers' LlamaModel/Qwen2Model):
// embed → N × [RMSNorm → attention (RoPE, GQA, causal mask, optional q/k/v bias) → residual,
// RMSNorm → SwiGLU MLP → residual] → RMSNorm. LoRA updates join the projections they target.
// Pure tensor maths: no I/O, no tokenizer. Leaves out the output projection (see logits in
// policy-model.ts and token-logprobs.ts).
// Legend: B batch, T new positions, N = B·T, D hidden, V vocab, r LoRA rank.
import * as tf from '@tensorflow/tfjs';
import { attention } from './attention.ts';
import type { DecoderWeights, LinearWeights } from './decoder-weights.ts';
import type { ModelConfig, Projection } from './hf-config.ts';
import type { KvCache, KvPair } from './kv-cache.ts';
import type { LoraAdapter } from './lora.ts';
import { ropeTables } from './rope.ts';

/** An adapter applied to some rows: `rowScale` [N, 1] holds 1 for the tokens of rows that use it,
 * 0 for the others; null applies it to every row. */
export interface LoraRoute {
  readonly adapter: LoraAdapter;
  readonly rowScale: tf.Tensor2D | null;
}

export interface DecoderPass {
  readonly ids: tf.Tensor2D; // [B, T] int32
  readonly positions: tf.Tensor2D; // [B, T] int32 RoPE positions
  readonly maskBias: tf.Tensor; // [B, 1, 1, T, S] from attentionMaskBias
  readonly past?: KvCache;
  readonly lora?: readonly LoraRoute[];
  /** Applies LoRA dropout (training only). */
  readonly training?: boolean;
  /** Return this call's keys/values (for the cache). */
  readonly keepKv?: boolean;
}

export interface Decoder {
  readonly config: ModelConfig;
  readonly weights: DecoderWeights;
  /** RoPE inverse frequencies (rope.ts), [hd/2]. */
  readonly inverseFrequencies: Float32Array;
}

/** RMSNorm (Zhang & Sennrich 2019, arXiv:1910.07467): x / √(mean(x²) + ε) · w, in float32. */
export function rmsNorm(x: tf.Tensor2D, weight: tf.Tensor1D, eps: number): tf.Tensor2D {
  const meanSquare = tf.mean(tf.square(x), -1, true); // [N, 1]
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(meanSquare, eps))), weight) as tf.Tensor2D; // [N, D]
}

/** x·Wᵀ + b, plus Σ over routes of scaling · B·A·x (PEFT's lora.Linear.forward order). x: [N, in]. */
function linear(
  x: tf.Tensor2D,
  weights: LinearWeights,
  projection: Projection,
  layer: number,
  routes: readonly LoraRoute[],
  training: boolean,
): tf.Tensor2D {
  let y = tf.matMul(x, weights.weightT); // [N, out]
  if (weights.bias) y = tf.add(y, weights.bias);
  for (const { adapter, rowScale } of routes) {
    const pair = adapter.layers[layer]?.[projection];
    if (!pair) continue;
    const input = training && adapter.config.dropout > 0 ? tf.dropout(x, adapter.config.dropout) : x;
    // The scale and the row mask multiply the rank-r intermediate, not the [N, out] update.
    let u = tf.mul(tf.matMul(input, pair.aT), adapter.scaling); // [N, r]
    if (rowScale) u = tf.mul(u, rowScale);
    y = tf.add(y, tf.matMul(u, pair.bT)); // [N, out]
  }
  return y as tf.Tensor2D;
}

/** Runs the layers; returns the final-normed hidden states [B, T, D] and, if asked, the new cache. */
export function decoderForward(
  decoder: Decoder,
  pass: DecoderPass,
): { hidden: tf.Tensor3D; cache: KvCache | null } {
  const { config, weights } = decoder;
  const [b, t] = pass.ids.shape;
  const routes = pass.lora ?? [];
  const training = pass.training ?? false;
  // Embeddings are frozen, so this gather never sits on a gradient path (no UnsortedSegmentSum on wasm).
  let x = tf.gather(weights.embed, tf.reshape(pass.ids, [b * t])) as tf.Tensor2D; // [N, D]
  // Built once for all layers; the queries' tables carry attention's 1/√hd.
  const rope = ropeTables(pass.positions, decoder.inverseFrequencies); // [B, T, 1, hd] tables
  const queryRope = ropeTables(pass.positions, decoder.inverseFrequencies, 1 / Math.sqrt(config.headDim));
  const present: KvPair[] = [];
  weights.layers.forEach((layer, index) => {
    const p = layer.projections;
    const h = rmsNorm(x, layer.inputNorm, config.rmsNormEps); // [N, D]
    const { output, present: kv } = attention({
      q: linear(h, p.q_proj, 'q_proj', index, routes, training), // [N, H·hd]
      k: linear(h, p.k_proj, 'k_proj', index, routes, training), // [N, K·hd]
      v: linear(h, p.v_proj, 'v_proj', index, routes, training), // [N, K·hd]
      batch: b,
      numHeads: config.numHeads,
      numKvHeads: config.numKvHeads,
      headDim: config.headDim,
      rope,
      queryRope,
      maskBias: pass.maskBias,
      past: pass.past?.layers[index],
      keepKv: pass.keepKv,
    });
    if (pass.keepKv && kv) present.push(kv);
    x = tf.add(x, linear(output, p.o_proj, 'o_proj', index, routes, training)) as tf.Tensor2D; // [N, D]
    const m = rmsNorm(x, layer.postAttentionNorm, config.rmsNormEps); // [N, D]
    const gate = linear(m, p.gate_proj, 'gate_proj', index, routes, training); // [N, F]
    const up = linear(m, p.up_proj, 'up_proj', index, routes, training); // [N, F]
    const act = tf.mul(tf.mul(gate, tf.sigmoid(gate)), up) as tf.Tensor2D; // SiLU(gate)·up, [N, F]
    x = tf.add(x, linear(act, p.down_proj, 'down_proj', index, routes, training)) as tf.Tensor2D; // [N, D]
  });
  const hidden = tf.reshape(rmsNorm(x, weights.finalNorm, config.rmsNormEps), [
    b,
    t,
    config.hiddenSize,
  ]) as tf.Tensor3D;
  const cache = pass.keepKv ? { layers: present, length: (pass.past?.length ?? 0) + t } : null;
  return { hidden, cache };
}
