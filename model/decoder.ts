// The decoder-only transformer forward pass of Llama, Qwen2 and Qwen3 (transformers' LlamaModel,
// Qwen2Model, Qwen3Model): embed → N × [RMSNorm → attention (optional q/k/v bias, Qwen3's per-head
// q/k RMSNorm, RoPE, GQA, causal mask) → residual, RMSNorm → SwiGLU MLP → residual] → RMSNorm.
// LoRA updates join the projections they target.
// Pure tensor maths: no I/O, no tokenizer. Leaves out the output projection (see logits in
// policy-model.ts and token-logprobs.ts).
// Legend: B batch, T new positions, N = B·T, D hidden, V vocab, r LoRA rank, H query heads, K key/value
// heads, hd head dim.
import * as tf from '@tensorflow/tfjs';
import { attention } from './attention.ts';
import type { DecoderWeights, GroupWeights } from './decoder-weights.ts';
import type { ModelConfig } from './hf-config.ts';
import type { KvCache, KvPair } from './kv-cache.ts';
import type { LoraAdapter } from './lora.ts';
import { ropeTables, scaledRopeTables } from './rope.ts';

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

/**
 * RMSNorm (Zhang & Sennrich 2019, arXiv:1910.07467): y = x·r·w with r = 1/√(mean(x²) + ε) per row,
 * in float32. Its gradient is written out (w is a frozen base weight, so only x gets one):
 *   dx = r·(g − x·r²·mean(g·x)),  g = dy·w,
 * 8 kernels where the tape's own chain rule through square, mean, rsqrt and two products ran ~15.
 */
export function rmsNorm(x: tf.Tensor2D, weight: tf.Tensor1D, eps: number): tf.Tensor2D {
  const norm = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [input, save] = args as [tf.Tensor2D, tf.GradSaveFunc];
    const r = tf.rsqrt(tf.add(tf.mean(tf.square(input), -1, true), eps)); // [N, 1]
    save([input, r]);
    return {
      value: tf.mul(tf.mul(input, r), weight) as tf.Tensor2D, // [N, D]
      gradFunc: (dy: tf.Tensor2D, saved: tf.Tensor[]) => {
        const [savedX, savedR] = saved as [tf.Tensor2D, tf.Tensor2D];
        const g = tf.mul(dy, weight); // [N, D]
        const projection = tf.mul(tf.mul(savedR, savedR), tf.mean(tf.mul(g, savedX), -1, true)); // [N, 1]
        return tf.mul(tf.sub(g, tf.mul(savedX, projection)), savedR);
      },
    };
  });
  return norm(x) as tf.Tensor2D;
}

/**
 * One group of projections that read the same input x [N, in] (decoder-weights.ts): x·Wᵀ + b for
 * all members in one product, then per route Σ scaling · B·A·x (PEFT's lora.Linear.forward order)
 * with the members' A matrices side by side, so x meets one [in, Σr] product (and, backwards, one
 * transpose of x and one product for dA and for dx) instead of one per member. Returns one [N, out]
 * per member, in the group's order.
 */
function projectGroup(
  x: tf.Tensor2D,
  group: GroupWeights,
  layer: number,
  routes: readonly LoraRoute[],
  training: boolean,
): tf.Tensor2D[] {
  let y = tf.matMul(x, group.weightT); // [N, Σ out]
  if (group.bias) y = tf.add(y, group.bias);
  const outputs = (group.members.length === 1 ? [y] : tf.split(y, [...group.sizes], 1)) as tf.Tensor2D[];
  for (const { adapter, rowScale } of routes) {
    const adapted = group.members.flatMap((projection, index) => {
      const pair = adapter.layers[layer]?.[projection];
      return pair ? [{ index, pair }] : [];
    });
    if (adapted.length === 0) continue;
    const dropout = training && adapter.config.dropout > 0;
    // PEFT draws a dropout mask per module, so with dropout each member keeps its own product.
    const inputs = adapted.map(() => (dropout ? tf.dropout(x, adapter.config.dropout) : x));
    const ranks = adapted.map(({ pair }) => pair.aT.shape[1] as number);
    const aT =
      adapted.length === 1 || dropout
        ? null
        : tf.concat(
            adapted.map(({ pair }) => pair.aT),
            1,
          ); // [in, Σr]
    // The scale and the row mask multiply the rank-r intermediate, not the [N, out] update.
    const scale = (u: tf.Tensor) => {
      const scaled = tf.mul(u, adapter.scaling);
      return rowScale ? tf.mul(scaled, rowScale) : scaled;
    };
    const us = aT
      ? (tf.split(scale(tf.matMul(x, aT)), ranks, 1) as tf.Tensor2D[]) // [N, Σr] → [N, r] each
      : adapted.map(({ pair }, k) => scale(tf.matMul(inputs[k] as tf.Tensor2D, pair.aT)) as tf.Tensor2D);
    adapted.forEach(({ index, pair }, k) => {
      outputs[index] = tf.add(
        outputs[index] as tf.Tensor2D,
        tf.matMul(us[k] as tf.Tensor2D, pair.bT),
      ) as tf.Tensor2D;
    });
  }
  return outputs;
}

/** RMSNorm over each head's hd values of x [N, heads·hd], with one weight [hd] shared by the heads:
 * Qwen3Attention's q_norm / k_norm, applied to the projection (LoRA included) before RoPE. */
function headNorm(x: tf.Tensor2D, weight: tf.Tensor1D, headDim: number, eps: number): tf.Tensor2D {
  const [n, width] = x.shape;
  const perHead = rmsNorm(tf.reshape(x, [(n * width) / headDim, headDim]), weight, eps); // [N·heads, hd]
  return tf.reshape(perHead, [n, width]); // [N, heads·hd]
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
  const queryRope = scaledRopeTables(rope, 1 / Math.sqrt(config.headDim));
  const present: KvPair[] = [];
  weights.layers.forEach((layer, index) => {
    const { qkv, o, gateUp, down } = layer.groups;
    const h = rmsNorm(x, layer.inputNorm, config.rmsNormEps); // [N, D]
    let [q, k, v] = projectGroup(h, qkv, index, routes, training) as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D];
    if (layer.qkNorm) {
      q = headNorm(q, layer.qkNorm.q, config.headDim, config.rmsNormEps); // [N, H·hd]
      k = headNorm(k, layer.qkNorm.k, config.headDim, config.rmsNormEps); // [N, K·hd]
    }
    const { output, present: kv } = attention({
      q, // [N, H·hd]
      k, // [N, K·hd]
      v, // [N, K·hd]
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
    x = tf.add(x, projectGroup(output, o, index, routes, training)[0] as tf.Tensor2D) as tf.Tensor2D; // [N, D]
    const m = rmsNorm(x, layer.postAttentionNorm, config.rmsNormEps); // [N, D]
    const [gate, up] = projectGroup(m, gateUp, index, routes, training) as [tf.Tensor2D, tf.Tensor2D]; // [N, F] each
    const act = tf.mul(tf.mul(gate, tf.sigmoid(gate)), up) as tf.Tensor2D; // SiLU(gate)·up, [N, F]
    x = tf.add(x, projectGroup(act, down, index, routes, training)[0] as tf.Tensor2D) as tf.Tensor2D; // [N, D]
  });
  const hidden = tf.reshape(rmsNorm(x, weights.finalNorm, config.rmsNormEps), [
    b,
    t,
    config.hiddenSize,
  ]) as tf.Tensor3D;
  const cache = pass.keepKv ? { layers: present, length: (pass.past?.length ?? 0) + t } : null;
  return { hidden, cache };
}
