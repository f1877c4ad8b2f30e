// Causal self-attention with rotary embeddings and grouped-query attention (Ainslie et al. 2023,
// arXiv:2305.13245), as in transformers' LlamaAttention/Qwen2Attention (eager path). GQA without
// repeating key/value heads: query heads are grouped under their key/value head by a reshape,
// [B, H, T, hd] → [B, K, G·T, hd], because tile's gradient stops at rank 4 and gather has no
// gradient on wasm (feasibility §10.3). Keys are transposed explicitly (no transposeB on wasm).
// Legend: B batch, T new positions, S = P + T keys (P cached), H query heads, K key/value heads,
// G = H / K queries per key/value head, hd head dim, N = B·T.
import * as tf from '@tensorflow/tfjs';
import type { KvPair } from './kv-cache.ts';
import { appendKv } from './kv-cache.ts';
import { applyRope } from './rope.ts';

export interface AttentionInput {
  readonly q: tf.Tensor2D; // [N, H·hd] (projected, biased)
  readonly k: tf.Tensor2D; // [N, K·hd]
  readonly v: tf.Tensor2D; // [N, K·hd]
  readonly batch: number;
  readonly numHeads: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  readonly cos: tf.Tensor4D; // [B, 1, T, hd]
  readonly sin: tf.Tensor4D; // [B, 1, T, hd]
  readonly maskBias: tf.Tensor; // [B, 1, 1, T, S]
  readonly past?: KvPair;
}

/** Returns the attention output [N, H·hd] (before o_proj) and the keys/values including this call's. */
export function attention(input: AttentionInput): { output: tf.Tensor2D; present: KvPair } {
  const { batch: b, numHeads: h, numKvHeads: kv, headDim: hd } = input;
  const g = h / kv;
  const t = input.q.shape[0] / b;
  const heads = (x: tf.Tensor2D, n: number) =>
    tf.transpose(tf.reshape(x, [b, t, n, hd]), [0, 2, 1, 3]) as tf.Tensor4D; // [B, n, T, hd]
  const q = applyRope(heads(input.q, h), input.cos, input.sin); // [B, H, T, hd]
  const kNew = applyRope(heads(input.k, kv), input.cos, input.sin); // [B, K, T, hd]
  const vNew = heads(input.v, kv); // [B, K, T, hd]
  const present = appendKv(input.past, kNew, vNew); // k, v: [B, K, S, hd]
  const s = present.k.shape[2];
  // Query head j·G + i uses key/value head j (transformers' repeat_kv), so H splits as [K, G].
  const grouped = tf.reshape(tf.mul(q, 1 / Math.sqrt(hd)), [b, kv, g * t, hd]); // [B, K, G·T, hd]
  const keysT = tf.transpose(present.k, [0, 1, 3, 2]); // [B, K, hd, S]
  const scores = tf.reshape(tf.matMul(grouped, keysT), [b, kv, g, t, s]); // [B, K, G, T, S]
  const probs = tf.softmax(tf.add(scores, input.maskBias)); // [B, K, G, T, S]
  const mixed = tf.matMul(tf.reshape(probs, [b, kv, g * t, s]), present.v); // [B, K, G·T, hd]
  const perHead = tf.reshape(mixed, [b, h, t, hd]); // [B, H, T, hd]
  const output = tf.reshape(tf.transpose(perHead, [0, 2, 1, 3]), [b * t, h * hd]) as tf.Tensor2D; // [N, H·hd]
  return { output, present };
}
