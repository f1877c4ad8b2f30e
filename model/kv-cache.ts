// The key/value cache of incremental decoding: per layer, the rotated keys and the values of every
// position seen so far. Appending concatenates (tensors are immutable in tfjs), so a step copies the
// cache once: fine for the short sequences of agent turns, and simpler than a ring of buffers.
// Legend: B batch, K key/value heads, S cached positions, hd head dim.
import * as tf from '@tensorflow/tfjs';

export interface KvPair {
  readonly k: tf.Tensor4D; // [B, K, S, hd]
  readonly v: tf.Tensor4D; // [B, K, S, hd]
}

export interface KvCache {
  /** One pair per layer. */
  readonly layers: readonly KvPair[];
  /** S: positions held (padding included). */
  readonly length: number;
}

/** Past (if any) followed by the new positions, along the sequence axis. */
export function appendKv(past: KvPair | undefined, k: tf.Tensor4D, v: tf.Tensor4D): KvPair {
  if (!past) return { k, v };
  return {
    k: tf.concat([past.k, k], 2), // [B, K, S + T, hd]
    v: tf.concat([past.v, v], 2), // [B, K, S + T, hd]
  };
}

export function disposeKvCache(cache: KvCache | undefined): void {
  if (!cache) return;
  for (const { k, v } of cache.layers) tf.dispose([k, v]);
}
