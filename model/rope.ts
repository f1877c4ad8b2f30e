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

/** cos and sin tables for the given positions: each [B, 1, T, hd], broadcast over heads. */
export function ropeTables(
  positions: tf.Tensor2D,
  inverseFrequencies: Float32Array,
): { cos: tf.Tensor4D; sin: tf.Tensor4D } {
  return tf.tidy(() => {
    const [b, t] = positions.shape;
    const half = inverseFrequencies.length;
    const angles = tf.mul(
      tf.reshape(tf.cast(positions, 'float32'), [b, t, 1]), // [B, T, 1]
      tf.tensor1d(inverseFrequencies).reshape([1, 1, half]), // [1, 1, hd/2]
    ); // [B, T, hd/2]
    const full = tf.concat([angles, angles], -1).reshape([b, 1, t, 2 * half]); // [B, 1, T, hd]
    return { cos: tf.cos(full) as tf.Tensor4D, sin: tf.sin(full) as tf.Tensor4D };
  });
}

/** x·cos + rotate_half(x)·sin, where rotate_half([x1, x2]) = [−x2, x1] on the last axis. x: [B, heads, T, hd]. */
export function applyRope(x: tf.Tensor4D, cos: tf.Tensor4D, sin: tf.Tensor4D): tf.Tensor4D {
  return tf.tidy(() => {
    const [x1, x2] = tf.split(x, 2, -1) as [tf.Tensor4D, tf.Tensor4D]; // 2 × [B, heads, T, hd/2]
    const rotated = tf.concat([tf.neg(x2), x1], -1); // [B, heads, T, hd]
    return tf.add(tf.mul(x, cos), tf.mul(rotated, sin)) as tf.Tensor4D;
  });
}
