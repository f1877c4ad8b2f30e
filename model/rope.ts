// Rotary position embeddings (RoFormer, Su et al. 2021, arXiv:2104.09864) in the "rotate half" layout
// of transformers' Llama/Qwen2: the head dimension is split into two halves that rotate together.
// Legend: B batch, T query positions, hd head dim.
import * as tf from '@tensorflow/tfjs';
import type { ModelConfig } from './hf-config.ts';

/**
 * inv_freq[i] = θ^(−2i/hd), i < hd/2, adjusted by `rope_scaling`: "linear" divides by the factor;
 * "llama3" (Meta's Llama 3.1 release, `apply_scaling`; transformers `_compute_llama3_parameters`)
 * divides long wavelengths by the factor, keeps short ones, and blends in between.
 */
export function ropeInverseFrequencies(config: ModelConfig): Float32Array {
  const half = config.headDim / 2;
  const out = new Float32Array(half);
  for (let i = 0; i < half; i++) out[i] = 1 / config.ropeTheta ** ((2 * i) / config.headDim);
  const scaling = config.ropeScaling;
  if (scaling === null) return out;
  switch (scaling.type) {
    case 'linear':
      return out.map((f) => f / scaling.factor);
    case 'llama3': {
      const { factor, lowFreqFactor, highFreqFactor, originalMaxPositionEmbeddings: context } = scaling;
      const lowFreqWavelength = context / lowFreqFactor;
      const highFreqWavelength = context / highFreqFactor;
      return out.map((f) => {
        const wavelength = (2 * Math.PI) / f;
        if (wavelength < highFreqWavelength) return f;
        if (wavelength > lowFreqWavelength) return f / factor;
        const smooth = (context / wavelength - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
        return (1 - smooth) * (f / factor) + smooth * f;
      });
    }
  }
}

/** What applyRope needs for one forward pass: built once, shared by every layer. */
export interface RopeTables {
  readonly cos: tf.Tensor4D; // [B, T, 1, hd], broadcast over heads
  readonly sin: tf.Tensor4D; // [B, T, 1, hd]
  /** rotate_half as a matrix: x·R = [−x2, x1] on a row x = [x1, x2] of length hd. */
  readonly rotation: tf.Tensor2D; // [hd, hd]
}

/** R with (x·R)_j = −x_{j+hd/2} for j < hd/2 and x_{j−hd/2} above: one ±1 per column. */
function rotateHalfMatrix(headDim: number): tf.Tensor2D {
  const half = headDim / 2;
  const r = new Float32Array(headDim * headDim);
  for (let j = 0; j < half; j++) {
    r[(j + half) * headDim + j] = -1;
    r[j * headDim + j + half] = 1;
  }
  return tf.tensor2d(r, [headDim, headDim]);
}

/** cos and sin tables for the given positions. */
export function ropeTables(positions: tf.Tensor2D, inverseFrequencies: Float32Array): RopeTables {
  return tf.tidy(() => {
    const [b, t] = positions.shape;
    const half = inverseFrequencies.length;
    const angles = tf.mul(
      tf.reshape(tf.cast(positions, 'float32'), [b, t, 1]), // [B, T, 1]
      tf.tensor1d(inverseFrequencies).reshape([1, 1, half]), // [1, 1, hd/2]
    ); // [B, T, hd/2]
    const full = tf.concat([angles, angles], -1).reshape([b, t, 1, 2 * half]); // [B, T, 1, hd]
    return {
      cos: tf.cos(full) as tf.Tensor4D,
      sin: tf.sin(full) as tf.Tensor4D,
      rotation: rotateHalfMatrix(2 * half),
    };
  });
}

/** The same tables times `scale`: RoPE is linear, so attention's 1/√hd can ride on the queries' tables
 *  instead of costing a multiply per layer. */
export function scaledRopeTables(tables: RopeTables, scale: number): RopeTables {
  return {
    cos: tf.mul(tables.cos, scale) as tf.Tensor4D,
    sin: tf.mul(tables.sin, scale) as tf.Tensor4D,
    rotation: tables.rotation,
  };
}

/**
 * x·cos + rotate_half(x)·sin, where rotate_half([x1, x2]) = [−x2, x1] on the last axis, for x
 * [B, T, heads, hd]. rotate_half is a product with a fixed ±1 matrix rather than a split and a
 * concat: on wasm those two copies cost more than the small matmul, and R is exact (one ±1 term per
 * output).
 */
export function applyRope(x: tf.Tensor4D, tables: RopeTables): tf.Tensor4D {
  return tf.tidy(() => {
    const hd = x.shape[3];
    const rotated = tf.reshape(tf.matMul(tf.reshape(x, [-1, hd]), tables.rotation), x.shape); // [B, T, heads, hd]
    return tf.add(tf.mul(x, tables.cos), tf.mul(rotated, tables.sin)) as tf.Tensor4D;
  });
}
