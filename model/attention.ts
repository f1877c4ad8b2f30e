// Causal self-attention with rotary embeddings and grouped-query attention (Ainslie et al. 2023,
// arXiv:2305.13245), as in transformers' LlamaAttention/Qwen2Attention/Qwen3Attention (eager path;
// Qwen3's q/k norms are applied by the caller, decoder.ts, before RoPE here). GQA without
// repeating key/value heads: query heads are grouped under their key/value head by a reshape,
// [B, H, T, hd] → [B, K, G·T, hd], because tile's gradient stops at rank 4 and gather has no
// gradient on wasm (feasibility §10.3). Keys are transposed explicitly (no transposeB on wasm).
// Legend: B batch, T new positions, S = P + T keys (P cached), H query heads, K key/value heads,
// G = H / K queries per key/value head, hd head dim, N = B·T.
import * as tf from '@tensorflow/tfjs';
import type { KvPair } from './kv-cache.ts';
import { appendKv } from './kv-cache.ts';
import { applyRope, type RopeTables } from './rope.ts';

export interface AttentionInput {
  readonly q: tf.Tensor2D; // [N, H·hd] (projected, biased, and head-normed for Qwen3)
  readonly k: tf.Tensor2D; // [N, K·hd]
  readonly v: tf.Tensor2D; // [N, K·hd]
  readonly batch: number;
  readonly numHeads: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  /** The keys' rotary tables, and the queries' (the same, times 1/√hd). */
  readonly rope: RopeTables;
  readonly queryRope: RopeTables;
  readonly maskBias: tf.Tensor; // [B, 1, 1, T, S]
  readonly past?: KvPair;
  /** Return this call's keys and values with the past ones (for the cache); else `present` is null. */
  readonly keepKv?: boolean;
}

/** Returns the attention output [N, H·hd] (before o_proj) and, if asked, the keys/values including this call's. */
export function attention(input: AttentionInput): { output: tf.Tensor2D; present: KvPair | null } {
  const { batch: b, numHeads: h, numKvHeads: kv, headDim: hd } = input;
  const g = h / kv;
  const t = input.q.shape[0] / b;
  // RoPE on the projection's own layout [B, T, heads, hd]; one transpose per operand afterwards.
  const q = applyRope(tf.reshape(input.q, [b, t, h, hd]) as tf.Tensor4D, input.queryRope); // scaled by 1/√hd
  const k = applyRope(tf.reshape(input.k, [b, t, kv, hd]) as tf.Tensor4D, input.rope); // [B, T, K, hd]
  const v = tf.reshape(input.v, [b, t, kv, hd]); // [B, T, K, hd]
  let keysT: tf.Tensor; // [B, K, hd, S]
  let values: tf.Tensor; // [B, K, S, hd]
  let present: KvPair | null = null;
  if (input.past || input.keepKv) {
    present = appendKv(
      input.past,
      tf.transpose(k, [0, 2, 1, 3]) as tf.Tensor4D,
      tf.transpose(v, [0, 2, 1, 3]) as tf.Tensor4D,
    ); // k, v: [B, K, S, hd]
    keysT = tf.transpose(present.k, [0, 1, 3, 2]);
    values = present.v;
  } else {
    keysT = tf.transpose(k, [0, 2, 3, 1]); // straight to [B, K, hd, T]
    values = tf.transpose(v, [0, 2, 1, 3]);
  }
  const s = keysT.shape[3] as number;
  // Query head j·G + i uses key/value head j (transformers' repeat_kv), so H splits as [K, G].
  const grouped = tf.reshape(tf.transpose(q, [0, 2, 1, 3]), [b, kv, g * t, hd]); // [B, K, G·T, hd]
  const scores = tf.reshape(tf.matMul(grouped, keysT), [b, kv, g, t, s]); // [B, K, G, T, S]
  const probs = tf.softmax(tf.add(scores, input.maskBias)); // [B, K, G, T, S]
  const mixed = tf.matMul(tf.reshape(probs, [b, kv, g * t, s]), values); // [B, K, G·T, hd]
  const perHead = tf.reshape(mixed, [b, h, t, hd]); // [B, H, T, hd]
  const output = tf.reshape(tf.transpose(perHead, [0, 2, 1, 3]), [b * t, h * hd]) as tf.Tensor2D; // [N, H·hd]
  return { output, present };
}
