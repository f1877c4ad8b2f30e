// Global-norm gradient clipping over a list of gradient tensors (all adapter tensors together).
// Same rule as PyTorch's torch.nn.utils.clip_grad_norm_: coef = min(1, max_norm / (‖g‖₂ + 1e-6)),
// every gradient multiplied by coef (Pascanu et al. 2013, arXiv:1211.5063 §3.2).
import * as tf from '@tensorflow/tfjs';

export interface ClippedGrads {
  /** New tensors, same order and shapes; the inputs are left for the caller to dispose. */
  readonly grads: tf.Tensor[];
  /** [] the global L2 norm before clipping (what the step record logs as grad/norm). */
  readonly norm: tf.Scalar;
}

/** `maxNorm` = Infinity measures the norm without clipping. */
export function clipGradNorm(grads: readonly tf.Tensor[], maxNorm: number): ClippedGrads {
  if (!(maxNorm > 0)) throw new RangeError(`maxNorm must be > 0 (Infinity to disable), got ${maxNorm}`);
  if (grads.length === 0) throw new RangeError('clipGradNorm: no gradients');
  return tf.tidy(() => {
    // All gradients end to end: one square and one sum, not two kernels per tensor.
    const flat =
      grads.length === 1
        ? tf.reshape(grads[0] as tf.Tensor, [-1])
        : tf.concat(grads.map((grad) => tf.reshape(grad, [-1])));
    const norm = tf.sqrt(tf.sum(tf.square(flat))) as tf.Scalar; // []
    const coef = Number.isFinite(maxNorm)
      ? tf.minimum(tf.div(maxNorm, tf.add(norm, 1e-6)), 1) // []
      : tf.scalar(1);
    return { grads: grads.map((grad) => tf.mul(grad, coef)), norm };
  });
}
